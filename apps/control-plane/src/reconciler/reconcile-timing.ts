import type { DeploymentStatus } from '../deployments/deployment';

/** How often the reconciler looks, derived from the fleet's heartbeat so that tests with fast heartbeats run fast. */
export interface ReconcileTiming {
  /** Between two scans for due deployments. */
  readonly tickMs: number;
  /** Between two looks at a deployment that is changing (starting, stopping, recovering …). */
  readonly activeRecheckMs: number;
  /** Between two looks at a RUNNING deployment: a LOST worker or a failed job is noticed within this. */
  readonly runningRecheckMs: number;
  /** A dispatched run not reported running within this counts as failed (the worker allows 60 s to start a job). */
  readonly startTimeoutMs: number;
}

export function timingFor(heartbeatMs: number): ReconcileTiming {
  return {
    tickMs: Math.min(1_000, Math.max(50, Math.floor(heartbeatMs / 2))),
    activeRecheckMs: Math.min(1_000, Math.max(50, Math.floor(heartbeatMs / 2))),
    runningRecheckMs: heartbeatMs,
    startTimeoutMs: 90_000,
  };
}

/** Null: resting statuses are looked at again only when the API changes the deployment. */
export function recheckAfter(status: DeploymentStatus, timing: ReconcileTiming): number | null {
  switch (status) {
    case 'SUSPENDED':
    case 'FAILED':
    case 'FINISHED':
    case 'CANCELLED':
      return null;
    case 'RUNNING':
      return timing.runningRecheckMs;
    default:
      return timing.activeRecheckMs;
  }
}
