import { assertParallelism } from '../keygroups';
import type { JobDefinition } from './graph';
import { type JobConfig, type JobParameters, type JobParameterSpecs, resolveParameters } from './parameters';
import { GraphBuilder, JobDefinitionError, StreamBuilder } from './stream';

export interface JobOptions {
  readonly name: string;
  /** Key groups per keyed operator (the upper bound of its parallelism). Default 128. */
  readonly maxParallelism?: number;
}

/**
 * A job whose graph depends on its deployment (topics, properties): the worker builds it with the deployment's
 * config. Keep the operator ids independent of the parameters: they name the job's state.
 */
export interface ParameterizedJob<S extends JobParameterSpecs = JobParameterSpecs> {
  readonly kind: 'parameterized-job';
  readonly name: string;
  readonly maxParallelism: number;
  readonly parameters: S;
  /** The job for one deployment's config; a JobParameterError names each missing or invalid parameter. */
  instantiate(config?: JobConfig): JobDefinition;
}

/**
 * What a bundle exports. Fixed: `export default defineJob({ name: 'page-views' }, (job) => { ... })`.
 * Parameterized: `export default defineJob({ name: 'fraud', parameters: { topics: { input: param.topic() } } },
 * (job, params) => { ... params.topics.input ... })`, built when a deployment's config is known.
 */
export function defineJob(options: JobOptions, build: (builder: StreamBuilder) => void): JobDefinition;
export function defineJob<const S extends JobParameterSpecs>(
  options: JobOptions & { readonly parameters: S },
  build: (builder: StreamBuilder, params: JobParameters<S>) => void,
): ParameterizedJob<S>;
export function defineJob<const S extends JobParameterSpecs>(
  options: JobOptions & { readonly parameters?: S },
  build: (builder: StreamBuilder, params: JobParameters<S>) => void,
): JobDefinition | ParameterizedJob<S> {
  const maxParallelism = options.maxParallelism ?? 128;
  assertParallelism(1, maxParallelism);
  if (!options.name) throw new JobDefinitionError('a job needs a name');
  const parameters = options.parameters;
  if (!parameters) return buildGraph(options.name, maxParallelism, (b) => build(b, { topics: {}, properties: {} } as JobParameters<S>));
  return Object.freeze({
    kind: 'parameterized-job' as const,
    name: options.name,
    maxParallelism,
    parameters,
    instantiate: (config?: JobConfig) => {
      const values = resolveParameters(options.name, parameters, config);
      return buildGraph(options.name, maxParallelism, (b) => build(b, values));
    },
  });
}

/** Whatever a bundle exports, as the job to run with this deployment config (a fixed job ignores the config). */
export function instantiateJob(job: JobDefinition | ParameterizedJob, config?: JobConfig): JobDefinition {
  return isParameterizedJob(job) ? job.instantiate(config) : job;
}

export function isParameterizedJob(value: unknown): value is ParameterizedJob {
  const v = value as Partial<ParameterizedJob> | null;
  return !!v && v.kind === 'parameterized-job' && typeof v.instantiate === 'function';
}

function buildGraph(name: string, maxParallelism: number, build: (builder: StreamBuilder) => void): JobDefinition {
  const graph = new GraphBuilder();
  build(new StreamBuilder(graph));
  if (!graph.nodes.some((n) => n.kind === 'source')) throw new JobDefinitionError(`job "${name}" has no source`);
  if (!graph.nodes.some((n) => n.kind === 'sink')) throw new JobDefinitionError(`job "${name}" has no sink`);
  for (const node of graph.nodes) {
    if (node.kind === 'keyBy' && !graph.nodes.some((n) => 'input' in n && n.input === node.id)) {
      throw new JobDefinitionError(`keyBy "${node.id}" is not followed by process(), window() or connect()`);
    }
  }
  return Object.freeze({
    name,
    maxParallelism,
    nodes: Object.freeze([...graph.nodes]),
    ...(graph.rulesSchema !== undefined ? { rulesSchema: graph.rulesSchema } : {}),
  });
}
