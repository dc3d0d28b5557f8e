/** One immutable, numbered version of a deployment's rule set. */
export interface RuleSetVersion {
  readonly deploymentId: string;
  readonly version: number;
  readonly rules: readonly Record<string, unknown>[];
  readonly createdAt: Date;
}

export const ROLLOUT_KINDS = ['ROLLOUT', 'ROLLBACK', 'SHADOW'] as const;
export type RolloutKind = (typeof ROLLOUT_KINDS)[number];
export type RolloutPhase = 'ROLLING_OUT' | 'ACTIVE' | 'FAILED' | 'SUPERSEDED';

/** One publication of a version to the running job, and what its subtasks acknowledged. */
export interface Rollout {
  readonly id: string;
  readonly deploymentId: string;
  readonly version: number;
  readonly kind: RolloutKind;
  readonly phase: RolloutPhase;
  /** Kafka timestamp of the rollout's records; every ack echoes it. */
  readonly publishTs: number;
  readonly rulesTopic: string;
  readonly acksTopic: string;
  readonly expectedRuleIds: readonly string[];
  /** Offset in the rules topic of the rollout's last record: where in the rules input the subtasks switch. */
  readonly rulesOffset: string | null;
  readonly message: string | null;
  readonly createdAt: Date;
  readonly completedAt: Date | null;
}

/** What one subtask of the routing operator did with one rule of a rollout. */
export interface RolloutAck {
  readonly operatorId: string;
  readonly subtask: number;
  readonly parallelism: number;
  readonly ruleId: string;
  readonly outcome: 'applied' | 'deleted' | 'rejected';
  readonly problems: readonly string[] | null;
  readonly acksOffset: string;
  readonly ackedAt: Date;
  /** Per source partition (`topic:partition`), the offset after the last data record routed before the rule. */
  readonly inputPosition: InputPosition | null;
}

/** Per source partition (`topic:partition`), an offset in it. */
export type InputPosition = Readonly<Record<string, string>>;

/** Per subtask: has it applied the whole rollout, and where. */
export interface SubtaskProgress {
  readonly operatorId: string;
  readonly subtask: number;
  readonly parallelism: number;
  /** The rollout's version once every rule of it is acknowledged here; null while some are missing. */
  readonly appliedVersion: number | null;
  readonly acknowledgedRules: number;
  readonly rejected: readonly { readonly ruleId: string; readonly problems: readonly string[] }[];
  /** The rules-topic offset of the rollout's last record: this subtask applies the version from there on. */
  readonly rulesOffset: string | null;
  /**
   * Where in its data input this subtask switched to the version: per source partition, the offset after the last
   * record it routed by the previous rules; its records of that partition from this offset on are routed by this
   * version. Null until it applied the whole version, or when the job does not report positions.
   */
  readonly inputPosition: InputPosition | null;
  readonly lastAckAt: Date | null;
}

export interface RolloutStatus extends Rollout {
  readonly subtasks: readonly SubtaskProgress[];
  readonly acknowledgedSubtasks: number;
  /** The routing operator's parallelism as the acks report it; null before the first ack. */
  readonly totalSubtasks: number | null;
}
