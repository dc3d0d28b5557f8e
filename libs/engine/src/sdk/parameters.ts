/**
 * Deployment-time parameters: what a job declares it needs from the deployment that runs it (topics by logical
 * name, typed properties with defaults), and the checked values its definition is built with. The same bundle
 * then runs for any tenant: the deployment's `config.topics` and `config.properties` decide, not the source.
 */
/** A deployment's config as it reaches the job: logical topic name → Kafka topic, and properties (all strings). */
export interface JobConfig {
  readonly topics?: Readonly<Record<string, string>>;
  readonly properties?: Readonly<Record<string, string>>;
}

/** A Kafka topic the job reads or writes, named by the deployment's `config.topics.<name>`. */
export interface TopicParameter<T extends string | undefined = string> {
  readonly kind: 'topic';
  readonly optional: undefined extends T ? true : false;
  readonly description?: string;
}

/** A value from the deployment's `config.properties.<name>`, parsed from its string; `default` when absent. */
export interface PropertyParameter<T> {
  readonly kind: 'property';
  readonly type: 'string' | 'integer' | 'number' | 'boolean';
  readonly default?: T;
  readonly description?: string;
  /** The value, or a reason it is not valid (a message for the user). */
  parse(raw: string): { value: T } | { problem: string };
}

export interface JobParameterSpecs {
  readonly topics?: Readonly<Record<string, TopicParameter<string> | TopicParameter<string | undefined>>>;
  readonly properties?: Readonly<Record<string, PropertyParameter<unknown>>>;
}

/** The values a job's build function receives, typed by its declaration. */
export interface JobParameters<S extends JobParameterSpecs> {
  readonly topics: { readonly [K in keyof NonNullable<S['topics']>]: NonNullable<S['topics']>[K] extends TopicParameter<infer T> ? T : never };
  readonly properties: { readonly [K in keyof NonNullable<S['properties']>]: NonNullable<S['properties']>[K] extends PropertyParameter<infer T> ? T : never };
}

export interface ParameterProblem {
  /** Where in the deployment's config: `config.topics.alerts`, `config.properties.max-window-ms`. */
  readonly parameter: string;
  readonly reason: string;
}

/** A deployment's config does not fit the job's parameters; `problems` names each parameter and what is wrong. */
export class JobParameterError extends Error {
  override readonly name = 'JobParameterError';

  constructor(
    jobName: string,
    readonly problems: readonly ParameterProblem[],
  ) {
    super(`job "${jobName}" cannot run with this deployment's config: ${problems.map((p) => `${p.parameter}: ${p.reason}`).join('; ')}`);
  }
}

interface NumberOptions {
  readonly default?: number;
  readonly min?: number;
  readonly max?: number;
  readonly description?: string;
}

const TOPIC = /^[A-Za-z0-9._-]{1,249}$/;

function numeric(type: 'integer' | 'number', o: NumberOptions): PropertyParameter<number> {
  const range = `${o.min ?? '-∞'} to ${o.max ?? '∞'}`;
  return {
    kind: 'property',
    type,
    default: o.default,
    description: o.description,
    parse(raw) {
      const n = raw.trim() === '' ? NaN : Number(raw);
      if (type === 'integer' ? !Number.isSafeInteger(n) : !Number.isFinite(n)) return { problem: `${JSON.stringify(raw)} is not ${type === 'integer' ? 'an integer' : 'a number'}` };
      if ((o.min !== undefined && n < o.min) || (o.max !== undefined && n > o.max)) return { problem: `${n} is outside ${range}` };
      return { value: n };
    },
  };
}

/** Builders for a job's `parameters` declaration. */
export const param = {
  topic: (options: { description?: string } = {}): TopicParameter<string> => ({ kind: 'topic', optional: false, ...options }),
  /** A topic the deployment may leave out; the job gets `undefined` and picks its own fallback. */
  optionalTopic: (options: { description?: string } = {}): TopicParameter<string | undefined> => ({ kind: 'topic', optional: true, ...options }),
  integer: (options: NumberOptions = {}): PropertyParameter<number> => numeric('integer', options),
  number: (options: NumberOptions = {}): PropertyParameter<number> => numeric('number', options),
  string: (options: { default?: string; oneOf?: readonly string[]; description?: string } = {}): PropertyParameter<string> => ({
    kind: 'property',
    type: 'string',
    default: options.default,
    description: options.description,
    parse: (raw) => (options.oneOf && !options.oneOf.includes(raw) ? { problem: `${JSON.stringify(raw)} is not one of ${options.oneOf.join(', ')}` } : { value: raw }),
  }),
  boolean: (options: { default?: boolean; description?: string } = {}): PropertyParameter<boolean> => ({
    kind: 'property',
    type: 'boolean',
    default: options.default,
    description: options.description,
    parse: (raw) => (raw === 'true' ? { value: true } : raw === 'false' ? { value: false } : { problem: `${JSON.stringify(raw)} is not true or false` }),
  }),
};

/**
 * Checks a deployment's config against the declaration and returns the values. Every required topic must be named
 * (a valid Kafka topic name), and no topic the job does not declare (a misspelt name would otherwise be ignored);
 * properties missing take their defaults, and those the job does not declare are left alone (the platform's own,
 * such as `checkpoint.interval-ms`, share the map).
 */
export function resolveParameters<S extends JobParameterSpecs>(jobName: string, specs: S, config: JobConfig = {}): JobParameters<S> {
  const problems: ParameterProblem[] = [];
  const topicSpecs = specs.topics ?? {};
  const topics: Record<string, string | undefined> = {};
  for (const [name, spec] of Object.entries(topicSpecs)) {
    const topic = own(config.topics, name);
    if (topic === undefined) {
      if (!spec.optional) problems.push({ parameter: `config.topics.${name}`, reason: `is missing: the job needs this topic${spec.description ? ` (${spec.description})` : ''}` });
    } else if (!TOPIC.test(topic)) {
      problems.push({ parameter: `config.topics.${name}`, reason: `${JSON.stringify(topic)} is not a Kafka topic name` });
    }
    topics[name] = topic;
  }
  for (const name of Object.keys(config.topics ?? {})) {
    if (!Object.hasOwn(topicSpecs, name)) {
      problems.push({ parameter: `config.topics.${name}`, reason: `the job has no topic "${name}" (it has ${Object.keys(topicSpecs).join(', ') || 'none'})` });
    }
  }
  const properties: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(specs.properties ?? {})) {
    const raw = own(config.properties, name);
    if (raw === undefined) {
      if (spec.default === undefined) problems.push({ parameter: `config.properties.${name}`, reason: `is missing: a ${spec.type}${spec.description ? ` (${spec.description})` : ''}` });
      properties[name] = spec.default;
      continue;
    }
    const parsed = spec.parse(raw);
    if ('problem' in parsed) problems.push({ parameter: `config.properties.${name}`, reason: parsed.problem });
    else properties[name] = parsed.value;
  }
  if (problems.length > 0) throw new JobParameterError(jobName, problems);
  return { topics, properties } as JobParameters<S>;
}

function own(map: Readonly<Record<string, string>> | undefined, key: string): string | undefined {
  return map && Object.hasOwn(map, key) ? map[key] : undefined;
}
