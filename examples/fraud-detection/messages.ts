import type { RuleState, VersionedRule } from '@weir/rules';
import type { Transaction } from './transaction';

/** A transaction routed to one rule: keyed by that rule's grouping keys, stamped with the version that judges it. */
export interface RuledTransaction {
  readonly type: 'ruled';
  readonly rule: VersionedRule;
  /** The grouping-key values, JSON-encoded in the rule's order (e.g. `["p17","c3"]`). */
  readonly key: string;
  readonly tx: Transaction;
}

export type { Alert } from '@weir/rules';

/**
 * What one subtask did with one rules message: applied a version, deleted a rule or rejected the message. The
 * control plane reads these to show which subtasks apply which version.
 */
export interface RuleAck {
  readonly type: 'ack';
  readonly outcome: 'applied' | 'deleted' | 'rejected';
  readonly ruleId?: string;
  readonly ruleVersion?: number;
  readonly state?: RuleState;
  /** Present (true) when the message concerned the rule's shadow version. */
  readonly shadow?: true;
  /** For rejections: every problem, `path: message`. */
  readonly problems?: readonly string[];
  readonly tenantId: string;
  readonly jobId: string;
  readonly operatorId: string;
  readonly subtask: number;
  readonly parallelism: number;
  /** Timestamp of the rules record (its Kafka timestamp); also the ack record's timestamp (event time). */
  readonly ts: number;
  /** Processing time (epoch ms) at which this subtask applied the message: how long a rollout took to reach it. */
  readonly appliedAt?: number;
  /**
   * Where this subtask was in its transactions input when it applied the message: per partition
   * (`topic:partition`), the offset after the last transaction of that partition it had routed before. Its
   * transactions of that partition below the offset were routed by the rules before the message, the others after.
   * A partition is absent when none of its transactions reached this subtask yet (since it started or restored).
   */
  readonly inputPosition?: Readonly<Record<string, string>>;
}

export type RouterOutput = RuledTransaction | RuleAck;
