/**
 * Broadcast before data on a fresh start. A job started without a checkpoint has no broadcast state: if its data
 * sources read at once, records reach a broadcast-connected operator before the rules do and are judged by none.
 * So, like Kafka Streams bootstrapping a global table, the data sources upstream of a broadcast-connected operator
 * wait until every subtask of each broadcast source feeding it has offered what was available when it started, and
 * the broadcast source's subtask has passed it on (an in-band step after those records: the broadcast records are
 * then in every keyed subtask's input, ahead of any data record, and inputs are FIFO).
 * Over several processes (the Kafka exchange) a broadcast subtask's records reach the keyed subtasks through the
 * exchange topic, and the data sources waiting for them may run in other processes: the subtask announces its catching
 * up to every process through the run's peers (BootstrapPeers) once the exchange has acknowledged those records, so
 * every data record written later lies behind them in each exchange partition.
 * A restore needs none of this: the checkpoint holds the broadcast state and both inputs' positions.
 */
import type { JobPlan, StagePlan } from './plan';

/** How the processes of one run hear of each other's broadcast subtasks catching up (the worker's run control). */
export interface BootstrapPeers {
  /** Tells every process of the run, this one too, that this subtask of broadcast source `stageId` caught up. */
  announce(stageId: string, subtask: number): void;
  /** Every process's announcements, this one's too, reach `caughtUp` (repeats are harmless). */
  listen(caughtUp: (stageId: string, subtask: number) => void): void;
}

/**
 * Peers for runJob instances that share one memory (tests running a job's processes side by side). A process that
 * starts listening late still hears what was announced before, as every process of a run must.
 */
export class MemoryBootstrapPeers implements BootstrapPeers {
  private readonly listeners: ((stageId: string, subtask: number) => void)[] = [];
  private readonly announced: [string, number][] = [];

  announce(stageId: string, subtask: number): void {
    this.announced.push([stageId, subtask]);
    for (const listener of this.listeners) listener(stageId, subtask);
  }

  listen(caughtUp: (stageId: string, subtask: number) => void): void {
    this.listeners.push(caughtUp);
    for (const [stageId, subtask] of this.announced) caughtUp(stageId, subtask);
  }
}

export class BroadcastBootstrap {
  /** Broadcast source stage → its subtasks that have not caught up yet (of the whole run with peers, else local). */
  private readonly pending = new Map<string, Set<number>>();
  private readonly released = new Map<string, Promise<void>>();
  private readonly release = new Map<string, () => void>();
  /** Data source stage → what it waits for. */
  private readonly holds = new Map<string, Promise<void>>();

  /**
   * `pumped(stage)`: which subtasks of a broadcast source read through a pump (Kafka, generator) and so must catch
   * up: those of this process, or with `peers` those of the whole run; memory sources have nothing available at
   * start and count as caught up.
   */
  constructor(
    plan: JobPlan,
    pumped: (stage: StagePlan) => readonly number[],
    private readonly peers?: BootstrapPeers,
  ) {
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
      const subtasks = new Set(pumped(stages.get(broadcastId)!));
      this.pending.set(broadcastId, subtasks);
      this.released.set(broadcastId, subtasks.size === 0 ? Promise.resolve() : new Promise((resolve) => this.release.set(broadcastId, resolve)));
    }
    for (const [data, broadcasts] of waits) {
      this.holds.set(data, Promise.all([...broadcasts].map((b) => this.released.get(b)!)).then(() => undefined));
    }
    peers?.listen((stageId, subtask) => this.count(stageId, subtask));
  }

  /** What a data source waits for before its first read; undefined when it feeds no broadcast-connected operator. */
  holdFor(sourceStageId: string): Promise<void> | undefined {
    return this.holds.get(sourceStageId);
  }

  /** True when this source is a broadcast input some data source waits for. */
  isBroadcastSource(sourceStageId: string): boolean {
    return this.pending.has(sourceStageId);
  }

  /**
   * This process's subtask of a broadcast source has passed on what was available at start (over the Kafka
   * exchange: and the exchange acknowledged it). With peers, every process counts it when the announcement arrives.
   */
  caughtUp(sourceStageId: string, subtask: number): void {
    if (this.peers) this.peers.announce(sourceStageId, subtask);
    else this.count(sourceStageId, subtask);
  }

  private count(sourceStageId: string, subtask: number): void {
    const left = this.pending.get(sourceStageId);
    if (!left?.delete(subtask) || left.size > 0) return;
    this.release.get(sourceStageId)?.();
  }
}
