/**
 * The fraud-detection reference job (dynamic rules, in the spirit of Flink's fraud-detection demo):
 *
 *   transactions ─► check ─► keyBy(txId) ─┬─ connect(rules) ─► route: one record per ACTIVE rule, keyed by the
 *   rules ─► broadcast ───────────────────┘                    rule's grouping keys, stamped with its version
 *        ├─► acks (which subtask applied which rule version) ◄─┤
 *        └─────────────────────► keyBy(ruleId|key) ─ connect(rules) ─► evaluate in event time ─┬► alerts
 *                                                                                              └► shadow alerts
 *
 * The default export takes its topics and limits from the deployment (deployment-time parameters, FRAUD_PARAMETERS):
 * one bundle serves every tenant. buildFraudJob() builds it for fixed topics (tests), defineFraudJob() over any
 * sources and sinks (the test driver). Design: docs/fraud-detection.md.
 */
import {
  defineJob,
  json,
  kafkaSink,
  kafkaSource,
  memorySink,
  memorySource,
  param,
  type JobConfig,
  type JobDefinition,
  type SinkSpec,
  type SourceSpec,
  type StreamBuilder,
  tenantTopicPrefix,
} from '@weir/engine';
import { type RuleLimits, rulesSchemaFor } from '@weir/rules';
import type { Alert, RuleAck, RuledTransaction } from './messages';
import { evaluatorKey, ruleEvaluator } from './rule-evaluator';
import { ruleRouter } from './rule-router';
import { checkTransaction, TRANSACTION_FIELDS, type Transaction } from './transaction';

/** Operator ids are part of the state format: keep them across versions of the job. */
export const OPERATOR_IDS = {
  transactions: 'transactions',
  rules: 'rules',
  check: 'checked-transactions',
  route: 'route-by-rule',
  evaluate: 'evaluate-rules',
  alerts: 'alerts',
  shadowAlerts: 'shadow-alerts',
  acks: 'rule-acks',
} as const;

export interface FraudJobSettings {
  /** The longest rule window accepted; rules asking for more are rejected (acknowledged as such). */
  readonly maxWindowMs: number;
  /** Bounded out-of-orderness of the transactions' event time. Default 500 ms. */
  readonly maxOutOfOrdernessMs?: number;
  /** A transactions partition silent this long stops holding event time back. Default 5 s; 0: never. */
  readonly idleTimeoutMs?: number;
  /** Width of the event-time buckets windows are stored in. Default 1 s. */
  readonly bucketMs?: number;
  readonly name?: string;
  readonly maxParallelism?: number;
}

/** Where the job reads and writes; Kafka for deployments, memory for the test driver. */
export interface FraudJobIo {
  readonly transactions: SourceSpec<Transaction>;
  readonly rules: SourceSpec<unknown>;
  readonly alerts: SinkSpec<Alert>;
  /** What shadow versions would have raised. */
  readonly shadowAlerts: SinkSpec<Alert>;
  readonly ruleAcks: SinkSpec<RuleAck>;
}

export interface FraudJobTopics {
  readonly transactionsTopic: string;
  readonly rulesTopic: string;
  readonly alertsTopic: string;
  /** Where shadow versions' alerts go; `${alertsTopic}.shadow` when absent. */
  readonly shadowAlertsTopic?: string;
  readonly ruleAcksTopic: string;
}

/** A tenant's topics, under the platform's `t.<tenantId>.` prefix. */
export function tenantFraudTopics(tenantId: string): FraudJobTopics {
  const prefix = tenantTopicPrefix(tenantId);
  return {
    transactionsTopic: `${prefix}transactions`,
    rulesTopic: `${prefix}rules`,
    alertsTopic: `${prefix}alerts`,
    shadowAlertsTopic: `${prefix}shadow-alerts`,
    ruleAcksTopic: `${prefix}rule-acks`,
  };
}

export const DEMO_TOPICS: FraudJobTopics = {
  transactionsTopic: 'demo.transactions',
  rulesTopic: 'demo.rules',
  alertsTopic: 'demo.alerts',
  shadowAlertsTopic: 'demo.shadow-alerts',
  ruleAcksTopic: 'demo.rule-acks',
};

export const DEFAULT_MAX_WINDOW_MS = 24 * 3_600_000;

/** What rules of this job are validated against (also what `weir rules validate` uses). */
export function fraudRuleLimits(maxWindowMs: number = DEFAULT_MAX_WINDOW_MS): RuleLimits {
  return { fields: TRANSACTION_FIELDS, maxWindowMs };
}

/** The JSON Schema a bundle of this job declares as its manifest's `rulesSchema`. */
export function fraudRulesSchema(maxWindowMs: number = DEFAULT_MAX_WINDOW_MS): Record<string, unknown> {
  return rulesSchemaFor(fraudRuleLimits(maxWindowMs));
}

/**
 * What a deployment gives the job (its `config`): topics by logical name — the names the control plane's rules API
 * reads too (`rules`, `rule-acks`, `shadow-alerts`) — and limits as properties.
 */
export const FRAUD_PARAMETERS = {
  topics: {
    transactions: param.topic({ description: 'transactions in, JSON' }),
    rules: param.topic({ description: 'rule versions in; keep it compacted by rule id' }),
    alerts: param.topic({ description: 'alerts out' }),
    'shadow-alerts': param.optionalTopic({ description: 'shadow versions\' alerts out; default <alerts>.shadow' }),
    'rule-acks': param.topic({ description: 'which subtask applied which rule version' }),
  },
  properties: {
    'max-window-ms': param.integer({ default: DEFAULT_MAX_WINDOW_MS, min: 1, description: 'the longest rule window accepted' }),
    'max-out-of-orderness-ms': param.integer({ default: 500, min: 0 }),
    'idle-timeout-ms': param.integer({ default: 5_000, min: 0, description: '0: a silent partition holds event time back' }),
    'bucket-ms': param.integer({ default: 1_000, min: 1 }),
  },
};

/** The deployment config that runs the job on these topics with these settings (what `config` to deploy with). */
export function fraudJobConfig(topics: FraudJobTopics, settings: Partial<FraudJobSettings> = {}): Required<JobConfig> {
  const properties: Record<string, string> = {};
  if (settings.maxWindowMs !== undefined) properties['max-window-ms'] = String(settings.maxWindowMs);
  if (settings.maxOutOfOrdernessMs !== undefined) properties['max-out-of-orderness-ms'] = String(settings.maxOutOfOrdernessMs);
  if (settings.idleTimeoutMs !== undefined) properties['idle-timeout-ms'] = String(settings.idleTimeoutMs);
  if (settings.bucketMs !== undefined) properties['bucket-ms'] = String(settings.bucketMs);
  return {
    topics: {
      transactions: topics.transactionsTopic,
      rules: topics.rulesTopic,
      alerts: topics.alertsTopic,
      ...(topics.shadowAlertsTopic ? { 'shadow-alerts': topics.shadowAlertsTopic } : {}),
      'rule-acks': topics.ruleAcksTopic,
    },
    properties,
  };
}

/** The job over Kafka topics. */
export function buildFraudJob(options: FraudJobTopics & FraudJobSettings): JobDefinition {
  return defineFraudJob(fraudKafkaIo(options), options);
}

/** The job over in-memory sources and sinks (the TestDriver's, or a profile run's): transactions timed by `ts`. */
export function buildInMemoryFraudJob(settings: FraudJobSettings): JobDefinition {
  return defineFraudJob(
    {
      transactions: memorySource<Transaction>({ timestamps: (tx) => tx.ts }),
      rules: memorySource<unknown>(),
      alerts: memorySink(),
      shadowAlerts: memorySink(),
      ruleAcks: memorySink(),
    },
    settings,
  );
}

/** The job over any sources and sinks. */
export function defineFraudJob(io: FraudJobIo, settings: FraudJobSettings): JobDefinition {
  return defineJob({ name: settings.name ?? 'fraud-detection', maxParallelism: settings.maxParallelism ?? 128 }, (job) => fraudGraph(job, io, settings));
}

function fraudKafkaIo(options: FraudJobTopics & Pick<FraudJobSettings, 'maxOutOfOrdernessMs' | 'idleTimeoutMs'>): FraudJobIo {
  const idleTimeoutMs = options.idleTimeoutMs ?? 5_000;
  const eventTime = {
    timestamps: (tx: Transaction) => tx.ts,
    watermarks: { maxOutOfOrdernessMs: options.maxOutOfOrdernessMs ?? 500, ...(idleTimeoutMs > 0 ? { idleTimeoutMs } : {}) },
  };
  return {
    transactions: kafkaSource<Transaction>({ topic: options.transactionsTopic, format: json(), ...eventTime }),
    // From the earliest record: a job started without a checkpoint rebuilds its rules by replaying their history
    // (keep the topic compacted by rule id).
    rules: kafkaSource<unknown>({ topic: options.rulesTopic, format: json(), startFrom: 'earliest' }),
    alerts: kafkaSink<Alert>({ topic: options.alertsTopic, format: json(), key: (a) => `${a.ruleId}|${a.key}` }),
    shadowAlerts: kafkaSink<Alert>({ topic: options.shadowAlertsTopic ?? `${options.alertsTopic}.shadow`, format: json(), key: (a) => `${a.ruleId}|${a.key}` }),
    ruleAcks: kafkaSink<RuleAck>({ topic: options.ruleAcksTopic, format: json(), key: (a) => a.ruleId ?? null }),
  };
}

function fraudGraph(job: StreamBuilder, io: FraudJobIo, settings: FraudJobSettings): void {
  const limits = fraudRuleLimits(settings.maxWindowMs);
  job.rulesSchema(rulesSchemaFor(limits));
  const rules = job.source<unknown>(OPERATOR_IDS.rules, io.rules).broadcast();
  const routed = job
    .source<Transaction>(OPERATOR_IDS.transactions, io.transactions)
    .map(OPERATOR_IDS.check, checkTransaction)
    .keyBy('by-transaction', (tx) => tx.txId)
    .connect(rules)
    .process(OPERATOR_IDS.route, ruleRouter(limits));
  routed
    .flatMap('acks-only', (o) => (o.type === 'ack' ? [o] : []))
    .sink(OPERATOR_IDS.acks, io.ruleAcks);
  const judged = routed
    .flatMap('ruled-only', (o): RuledTransaction[] => (o.type === 'ruled' ? [o] : []))
    .keyBy('by-rule-and-key', evaluatorKey)
    .connect(rules)
    .process(OPERATOR_IDS.evaluate, ruleEvaluator({ limits, bucketMs: settings.bucketMs ?? 1_000 }));
  judged.flatMap('live-only', (a) => (a.shadow ? [] : [a])).sink(OPERATOR_IDS.alerts, io.alerts);
  judged.flatMap('shadow-only', (a) => (a.shadow ? [a] : [])).sink(OPERATOR_IDS.shadowAlerts, io.shadowAlerts);
}

/** The bundle's job: topics and limits from the deployment that runs it. */
export default defineJob({ name: 'fraud-detection', maxParallelism: 128, parameters: FRAUD_PARAMETERS }, (job, { topics, properties }) => {
  const settings: FraudJobSettings = {
    maxWindowMs: properties['max-window-ms'],
    maxOutOfOrdernessMs: properties['max-out-of-orderness-ms'],
    idleTimeoutMs: properties['idle-timeout-ms'],
    bucketMs: properties['bucket-ms'],
  };
  const io = fraudKafkaIo({
    transactionsTopic: topics.transactions,
    rulesTopic: topics.rules,
    alertsTopic: topics.alerts,
    shadowAlertsTopic: topics['shadow-alerts'],
    ruleAcksTopic: topics['rule-acks'],
    ...settings,
  });
  fraudGraph(job, io, settings);
});
