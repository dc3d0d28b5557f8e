import type { ReportedKeySplit, SubtaskMetricsSnapshot } from '@weir/metrics';
import { checkLayout, loadModelFromSnapshots, PartitionerInputError, type LoadModel, type PartitionLayout } from '@weir/partitioner';
import type { Routing } from '../deployments/deployment';
import { plannerView } from './split-tables';
import { UNKNOWN_STATE_BYTES, type StateBytesEstimate } from './state-bytes';

/** One keyed operator's load model, planned on as the run routes it. */
export interface OperatorLoad {
  readonly operatorId: string;
  readonly layout: PartitionLayout;
  readonly load: LoadModel;
  /** A splittable window (WindowOptions.splittable): its hot keys may be split. */
  readonly splittable: boolean;
  /** Its split keys in effect, as the engine has them (key groups as parts). */
  readonly splitTable: readonly ReportedKeySplit[];
  /** An event-time window operator: its key groups are not moved (only its hot keys split, when splittable). */
  readonly windows: boolean;
  /** Where `load.stateBytes` came from, in words. */
  readonly stateBytesSource: string;
  /** The snapshots' wall-clock span: earliest fromMs, latest toMs. */
  readonly fromMs: number;
  readonly toMs: number;
}

export type OperatorLoadResult = { readonly ok: true; readonly operator: OperatorLoad } | { readonly ok: false; readonly operatorId: string; readonly why: string };

/**
 * The load models of the run's keyed operators of at least two subtasks, in `operatorIds` order (the bundle's), from
 * the latest fresh snapshot of each subtask. A snapshot does not say its operator is keyed; a keyed stage counts the
 * key groups of what it receives, so an operator none of whose subtasks counted one is not planned (a source, a sink,
 * or a keyed operator idle in the interval: nothing to balance). Every subtask must have reported: a missing one would
 * read as an idle subtask, and the planner would pile key groups onto it. A splittable window's split keys are
 * planned on as its subtasks report them (split-tables.ts); state bytes are what `stateBytesOf` estimates (the latest
 * checkpoint), else 0.
 */
export function keyedOperatorLoads(
  operatorIds: readonly string[],
  routing: Routing,
  parallelism: Readonly<Record<string, number>>,
  snapshots: readonly SubtaskMetricsSnapshot[],
  stateBytesOf: (operatorId: string, maxParallelism: number) => StateBytesEstimate | null = () => null,
): OperatorLoadResult[] {
  const results: OperatorLoadResult[] = [];
  for (const operatorId of operatorIds) {
    const owners = routing[operatorId];
    const n = parallelism[operatorId] ?? 1;
    if (!owners || n < 2) continue;
    // After a rescale the old layout's snapshots linger until stale: only subtasks the run has count.
    const own = snapshots.filter((s) => s.operatorId === operatorId && s.subtask < n);
    if (!own.some((s) => Object.keys(s.keyGroupCounts).length > 0)) continue;
    const reported = new Set(own.map((s) => s.subtask));
    const missing = Array.from({ length: n }, (_, i) => i).filter((i) => !reported.has(i));
    if (missing.length) {
      results.push({ ok: false, operatorId, why: `no fresh snapshot of subtask${missing.length === 1 ? '' : 's'} ${missing.join(', ')} of ${n}` });
      continue;
    }
    const view = plannerView(own, owners);
    if (!view.ok) {
      results.push({ ok: false, operatorId, why: view.why });
      continue;
    }
    try {
      const layout: PartitionLayout = { subtasks: n, owners: [...owners], splits: view.splits };
      checkLayout(layout);
      const state = stateBytesOf(operatorId, owners.length);
      const load = loadModelFromSnapshots(view.snapshots, layout, state ? { stateBytes: state.bytes } : {});
      const window = { fromMs: Math.min(...own.map((s) => s.fromMs)), toMs: Math.max(...own.map((s) => s.toMs)) };
      const operator = { operatorId, layout, load, splittable: view.splittable, splitTable: view.table, windows: own.some((s) => s.windows === true), stateBytesSource: state?.source ?? UNKNOWN_STATE_BYTES, ...window };
      results.push({ ok: true, operator });
    } catch (err) {
      if (!(err instanceof PartitionerInputError)) throw err;
      results.push({ ok: false, operatorId, why: err.message });
    }
  }
  return results;
}
