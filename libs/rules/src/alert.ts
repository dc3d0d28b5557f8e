/**
 * Raised when a rule's comparison holds for a transaction; names the rule version that judged it. The shape the fraud
 * job writes and every reader of its alert topics (the control plane's shadow results) parses.
 */
export interface Alert {
  /** `${ruleId}@${ruleVersion}/${txId}`: stable across replays, so a consumer can drop duplicates. */
  readonly alertId: string;
  readonly ruleId: string;
  readonly ruleVersion: number;
  readonly key: string;
  readonly aggregate: number;
  readonly limit: number;
  readonly txId: string;
  readonly ts: number;
  /** Present (true) on what a shadow version would have raised; those go to the shadow output only. */
  readonly shadow?: true;
}
