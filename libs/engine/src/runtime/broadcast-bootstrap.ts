/**
 * Broadcast before data on a fresh start. A job started without a checkpoint has no broadcast state: if its data
 * sources read at once, records reach a broadcast-connected operator before the rules do and are judged by none.
 * So, like Kafka Streams bootstrapping a global table, the data sources upstream of a broadcast-connected operator
 * wait until every subtask of each broadcast source feeding it has offered what was available when it started, and
 * the broadcast source's subtask has passed it on (an in-band step after those records: the broadcast records are
 * then in every keyed subtask's input, ahead of any data record, and inputs are FIFO).
 * A restore needs none of this: the checkpoint holds the broadcast state and both inputs' positions.
 */
import type { JobPlan, StagePlan } from './plan';

export class BroadcastBootstrap {
  /** Broadcast source stage → local subtasks that have not caught up yet. */
  private readonly pending = new Map<string, number>();
  private readonly released = new Map<string, Promise<void>>();
  private readonly release = new Map<string, () => void>();
  /** Data source stage → what it waits for. */
  private readonly holds = new Map<string, Promise<void>>();

  /**
   * `pumped(stageId)`: how many subtasks of a broadcast source read through a pump (Kafka, generator); memory
   * sources have nothing available at start and count as caught up.
   */
  constructor(plan: JobPlan, pumped: (stage: StagePlan) => number) {
    const stages = new Map(plan.stages.map((s) => [s.id, s]));
    const sourcesOf = (stageId: string): string[] => {
      const stage = stages.get(stageId)!;
      if (stage.root.kind === 'source') return [stage.id];
      return [stage.dataInput, stage.broadcastInput].flatMap((input) => (input ? sourcesOf(input.stageId) : []));
    };
    const waits = new Map<string, Set<string>>();
    for (const stage of plan.stages) {
      const broadcast = stage.broadcastInput && stages.get(stage.broadcastInput.stageId)!;
      // Only a broadcast read straight from a source: its subtask's input order is the order it reaches the operator.
      if (!stage.dataInput || !broadcast || broadcast.root.kind !== 'source') continue;
      for (const data of sourcesOf(stage.dataInput.stageId)) {
        if (data === broadcast.id) continue;
        const set = waits.get(data) ?? new Set<string>();
        waits.set(data, set.add(broadcast.id));
      }
    }
    for (const broadcastId of new Set([...waits.values()].flatMap((set) => [...set]))) {
      const count = pumped(stages.get(broadcastId)!);
      this.pending.set(broadcastId, count);
      this.released.set(broadcastId, count === 0 ? Promise.resolve() : new Promise((resolve) => this.release.set(broadcastId, resolve)));
    }
    for (const [data, broadcasts] of waits) {
      this.holds.set(data, Promise.all([...broadcasts].map((b) => this.released.get(b)!)).then(() => undefined));
    }
  }

  /** What a data source waits for before its first read; undefined when it feeds no broadcast-connected operator. */
  holdFor(sourceStageId: string): Promise<void> | undefined {
    return this.holds.get(sourceStageId);
  }

  /** True when this source is a broadcast input some data source waits for. */
  isBroadcastSource(sourceStageId: string): boolean {
    return this.pending.has(sourceStageId);
  }

  /** One subtask of a broadcast source has passed on what was available at start. */
  caughtUp(sourceStageId: string): void {
    const left = (this.pending.get(sourceStageId) ?? 0) - 1;
    this.pending.set(sourceStageId, left);
    if (left === 0) this.release.get(sourceStageId)?.();
  }
}
