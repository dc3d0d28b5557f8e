export const SLO_PERCENTILES = ['p50', 'p95', 'p99', 'p999'] as const;
export type SloPercentile = (typeof SLO_PERCENTILES)[number];

export const SLO_STATES = ['NO_DATA', 'OK', 'BREACHED'] as const;
export type SloState = (typeof SLO_STATES)[number];

export const SLO_EVENT_KINDS = ['BREACH', 'RECOVERED'] as const;
export type SloEventKind = (typeof SLO_EVENT_KINDS)[number];

/** The objective: "`percentile` of event-time latency ≤ `thresholdMs` in `target` of the minutes of a window". */
export interface SloObjective {
  readonly percentile: SloPercentile;
  readonly thresholdMs: number;
  /** Fraction of good minutes required, in (0, 1): 0.99 means 99 %. */
  readonly target: number;
  readonly windowMinutes: number;
}

/** The figures of the latest evaluation (all null/0 before the first minute with data). */
export interface SloEvaluation {
  readonly state: SloState;
  /** The minute (epoch ms of its start) the evaluation ran at. */
  readonly minute: number | null;
  readonly goodMinutes: number;
  readonly badMinutes: number;
  readonly compliance: number | null;
  readonly burnRate: number | null;
  readonly burnRate5m: number | null;
  /** 1 − burnRate: the share of the window's error budget left (negative once overspent). */
  readonly errorBudgetRemaining: number | null;
}

export interface Slo extends SloObjective {
  readonly tenantId: string;
  readonly id: string;
  readonly name: string;
  readonly deploymentId: string;
  readonly createdAt: Date;
  readonly status: SloEvaluation;
}

export interface SloEvent {
  readonly id: string;
  readonly sloId: string;
  readonly kind: SloEventKind;
  readonly minute: Date;
  readonly compliance: number;
  readonly burnRate: number;
  readonly burnRate5m: number | null;
  readonly reason: string;
  readonly at: Date;
}

/** One closed minute of a deployment: event-time latency percentiles in ms over every record it delivered. */
export interface SloMinute {
  /** Epoch ms of the minute's start. */
  readonly minute: number;
  readonly samples: number;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
}

/** What the `sloStatus` subscription pushes after every evaluation. */
export interface SloStatusMessage extends SloEvaluation {
  readonly sloId: string;
  readonly deploymentId: string;
  /** Set when this evaluation changed the state. */
  readonly event: SloEventKind | null;
  readonly at: number;
}
