import type { SubtaskMetricsSnapshot } from '@weir/metrics';

/**
 * DS2's arithmetic (Kalavri et al., OSDI 2018) on Weir's snapshots: pure functions, no I/O, no clock.
 *
 * A subtask's true processing rate is what it would process if busy all the time: records in ÷ busy time. Busy time
 * excludes waiting for input and being blocked by downstream, so it measures capacity, not the load offered; below 5%
 * busy the quotient is noise, and the subtask is unmeasured.
 */
export const MEASURABLE_BUSY_MS_PER_SEC = 50;

/** One operator's figures over its subtasks' latest snapshots. */
export interface OperatorRates {
  readonly operatorId: string;
  readonly subtasks: number;
  /** Records/s it took in, over its subtasks. */
  readonly recordsInPerSec: number;
  /** Per subtask, records/s taken in (index = subtask). */
  readonly subtaskRates: readonly number[];
  readonly busyMsPerSec: { readonly mean: number; readonly max: number; readonly maxSubtask: number };
  /** Records/s one subtask processes when busy all the time (the measured subtasks' records ÷ their busy time); null: none measured. */
  readonly trueRatePerSubtask: number | null;
  readonly measuredSubtasks: number;
}

export function operatorRates(operatorId: string, snapshots: readonly SubtaskMetricsSnapshot[], subtasks: number): OperatorRates {
  const subtaskRates = new Array<number>(subtasks).fill(0);
  let busySum = 0;
  let busyMax = 0;
  let maxSubtask = 0;
  let measuredRecords = 0;
  let measuredBusySec = 0;
  let measured = 0;
  for (const s of snapshots) {
    if (s.operatorId !== operatorId || s.subtask >= subtasks) continue;
    subtaskRates[s.subtask] = s.recordsInPerSec;
    busySum += s.busyMsPerSec;
    if (s.busyMsPerSec > busyMax) [busyMax, maxSubtask] = [s.busyMsPerSec, s.subtask];
    if (s.busyMsPerSec >= MEASURABLE_BUSY_MS_PER_SEC) {
      measured++;
      measuredRecords += s.recordsInPerSec;
      measuredBusySec += s.busyMsPerSec / 1000;
    }
  }
  return {
    operatorId,
    subtasks,
    recordsInPerSec: subtaskRates.reduce((a, r) => a + r, 0),
    subtaskRates,
    busyMsPerSec: { mean: busySum / subtasks, max: busyMax, maxSubtask },
    trueRatePerSubtask: measured && measuredRecords > 0 ? measuredRecords / measuredBusySec : null,
    measuredSubtasks: measured,
  };
}

/** What the sources are asked to deliver: what they read now, what arrives, and the backlog to drain. */
export interface SourceDemand {
  /** Records/s the sources emitted (what they read); null without source snapshots. */
  readonly readRatePerSec: number | null;
  /** Records behind the log end over Kafka source subtasks; null: no source reports one. */
  readonly backlog: number | null;
  /** How fast the backlog grew since the last look (records/s; negative: it shrank); null without a previous sample. */
  readonly backlogGrowthPerSec: number | null;
  /** What arrives at the log: the read rate plus the backlog's growth. */
  readonly ingestRatePerSec: number | null;
  /** Ingest plus the backlog drained within the catch-up window. */
  readonly targetRatePerSec: number | null;
  /** target ÷ read: how much more every operator must take in (1 without figures). */
  readonly scale: number;
}

/**
 * The sources' demand (Flink's autoscaler does the same): target = ingest + backlog ÷ catch-up, ingest = read rate +
 * the backlog's growth. Every operator is asked to take in `scale` times what it does now: DS2 propagates rates along
 * the graph through each operator's selectivity, and with one ratio Weir assumes selectivities stay as measured.
 */
export function sourceDemand(
  sources: readonly SubtaskMetricsSnapshot[],
  backlog: number | null,
  previous: { readonly atMs: number; readonly records: number } | null,
  nowMs: number,
  catchUpMs: number,
): SourceDemand {
  if (sources.length === 0) return { readRatePerSec: null, backlog, backlogGrowthPerSec: null, ingestRatePerSec: null, targetRatePerSec: null, scale: 1 };
  const read = sources.reduce((a, s) => a + s.recordsOutPerSec, 0);
  const elapsedSec = previous ? (nowMs - previous.atMs) / 1000 : 0;
  const growth = backlog !== null && previous && elapsedSec > 0 ? (backlog - previous.records) / elapsedSec : null;
  const ingest = Math.max(0, read + (growth ?? 0));
  const target = ingest + (backlog ?? 0) / (catchUpMs / 1000);
  // Nothing read: no ratio to scale by (a stalled source is not a capacity figure).
  const scale = read > 0 ? target / read : 1;
  return { readRatePerSec: read, backlog, backlogGrowthPerSec: growth, ingestRatePerSec: ingest, targetRatePerSec: target, scale };
}

/** An operator's demand at the target rate: its utilization at the current width and the width it needs. */
export interface OperatorNeed {
  readonly operatorId: string;
  /** Records/s it must take in to meet the sources' target. */
  readonly targetRatePerSec: number;
  /** target ÷ (subtasks × true rate): the busy share the target asks of each subtask now (above 1: it cannot keep up). */
  readonly utilization: number;
  /** ceil(target ÷ (true rate × target utilization)): the subtasks that meet the target at the target utilization. */
  readonly parallelism: number;
  /** Whether the true rate was measured; unmeasured (busy < 5% everywhere), utilization is the busy share itself. */
  readonly measured: boolean;
}

export function operatorNeed(rates: OperatorRates, scale: number, targetUtilization: number): OperatorNeed {
  const targetRatePerSec = rates.recordsInPerSec * scale;
  if (rates.trueRatePerSubtask === null) {
    // Idle or nearly so: at most 5% busy, so the utilization is known to be low without a rate to divide by.
    const utilization = (rates.busyMsPerSec.mean / 1000) * scale;
    return { operatorId: rates.operatorId, targetRatePerSec, utilization, parallelism: Math.max(1, Math.ceil((rates.subtasks * utilization) / targetUtilization)), measured: false };
  }
  const utilization = targetRatePerSec / (rates.subtasks * rates.trueRatePerSubtask);
  const parallelism = Math.max(1, Math.ceil(targetRatePerSec / (rates.trueRatePerSubtask * targetUtilization) - 1e-9));
  return { operatorId: rates.operatorId, targetRatePerSec, utilization, parallelism, measured: true };
}

/** max ÷ mean of the subtasks' records in (1 when all are equal or none took any in). */
export function loadImbalance(rates: OperatorRates): number {
  const mean = rates.recordsInPerSec / rates.subtasks;
  return mean > 0 ? Math.max(...rates.subtaskRates) / mean : 1;
}
