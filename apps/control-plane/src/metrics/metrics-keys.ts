/**
 * Redis keys of the metrics path (all under `weir:<WEIR_QUEUE_PREFIX>:`). Tenant, job and operator ids are
 * [A-Za-z0-9_-] (the protocol validates them), so ':' separates them unambiguously.
 */
export class MetricsKeys {
  constructor(private readonly prefix: string) {}

  /** Hash: `<operatorId>:<subtask>` → the subtask's latest snapshot (`<toMs>|<receivedAt>|<json>`). */
  snapshots(tenantId: string, jobId: string): string {
    return `weir:${this.prefix}:snapshots:${tenantId}:${jobId}`;
  }

  /** Set of `<tenantId>:<jobId>` with snapshots not yet merged and published. */
  get dirty(): string {
    return `weir:${this.prefix}:metrics-dirty`;
  }

  /** Sorted set of `<tenantId>:<jobId>` scored by the last snapshot's receipt: what /metrics renders. */
  get jobs(): string {
    return `weir:${this.prefix}:metrics-jobs`;
  }

  /** The latest merged DeploymentMetrics (JSON), for queries between pushes. */
  latest(tenantId: string, jobId: string): string {
    return `weir:${this.prefix}:metrics-latest:${tenantId}:${jobId}`;
  }

  /** Hash of one job's event-time histograms of one minute: `<operatorId>:<subtask>:<toMs>` → encoded HDR. */
  minute(tenantId: string, jobId: string, minuteStartMs: number): string {
    return `weir:${this.prefix}:slo-minute:${tenantId}:${jobId}:${minuteStartMs}`;
  }

  /** Sorted set of `<tenantId>:<jobId>:<minuteStartMs>` scored by the minute's end: minutes waiting to close. */
  get pendingMinutes(): string {
    return `weir:${this.prefix}:slo-minutes-pending`;
  }
}

export function jobMember(tenantId: string, jobId: string): string {
  return `${tenantId}:${jobId}`;
}

export function parseJobMember(member: string): { tenantId: string; jobId: string } | undefined {
  const [tenantId, jobId, ...rest] = member.split(':');
  return tenantId && jobId && rest.length === 0 ? { tenantId, jobId } : undefined;
}

export function minuteMember(tenantId: string, jobId: string, minuteStartMs: number): string {
  return `${tenantId}:${jobId}:${minuteStartMs}`;
}

export function parseMinuteMember(member: string): { tenantId: string; jobId: string; minuteStartMs: number } | undefined {
  const [tenantId, jobId, minute, ...rest] = member.split(':');
  const minuteStartMs = Number(minute);
  if (!tenantId || !jobId || rest.length || !Number.isSafeInteger(minuteStartMs)) return undefined;
  return { tenantId, jobId, minuteStartMs };
}

export const MINUTE_MS = 60_000;

export function minuteStart(epochMs: number): number {
  return epochMs - (epochMs % MINUTE_MS);
}
