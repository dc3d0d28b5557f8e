import type { WeirConfig } from '@weir/config';
import {
  CommandRejectedError,
  createCommandConsumer,
  createWorkerReporter,
  type CommandConsumer,
  type CommandContext,
  type MoveKeyGroups,
  type MoveReport,
  type RescaleReport,
  type RescaleRun,
  type RunningSubtask,
  type RunSubtasks,
  type WorkerCommand,
  type WorkerReporter,
} from '@weir/protocol';

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

export interface ReceivedCommand {
  readonly command: WorkerCommand;
  readonly at: number;
}

/**
 * A worker made of the protocol alone (the real reporter and command consumer over the real Redis, no job host):
 * it reports what its commands ask for, so tests drive the control plane through every state a multi-process run
 * can be in (a process still starting, a job host LOST, survivors slow to stop) without depending on what the
 * engine does. `run-subtasks` makes the process's subtasks STARTING (`autoRun`: RUNNING); `stop-subtasks` drops
 * the process's subtasks after `stopDelayMs`; `move-key-groups` answers with what `onMove` returns (by default a
 * report naming every key group asked for, 100 bytes and 1 ms each) or throws; `rescale-run` answers with what
 * `onRescale` returns (publishing progress through its context on the way), and is refused while it is null, as by a
 * worker that cannot rescale live; `split-keys` is recorded and applied (nothing to apply it to).
 */
export class ProtocolWorker {
  readonly received: ReceivedCommand[] = [];
  /** When each stopped process left the report (`<jobId>/<process>` → epoch ms). */
  readonly droppedAt = new Map<string, number>();
  autoRun = true;
  stopDelayMs = 0;
  onMove: (command: MoveKeyGroups) => Promise<MoveReport> = async (c) => reportOf(c);
  onRescale: ((command: RescaleRun, context: CommandContext) => Promise<RescaleReport>) | null = null;
  private subtasks: RunningSubtask[] = [];
  private readonly reporter: WorkerReporter;
  private readonly consumer: CommandConsumer;

  constructor(
    config: WeirConfig,
    readonly id: string,
    slots: number,
  ) {
    this.reporter = createWorkerReporter(config, { workerId: id, slots, version: 'test' }, { logger: silent, status: () => ({ runningSubtasks: this.subtasks }) });
    this.consumer = createCommandConsumer(
      config,
      id,
      {
        'run-subtasks': async (command) => {
          this.received.push({ command, at: Date.now() });
          this.begin(command);
        },
        'stop-subtasks': async (command) => {
          this.received.push({ command, at: Date.now() });
          const process = command.process ?? 0;
          const drop = () => {
            this.subtasks = this.subtasks.filter((s) => !(s.jobId === command.jobId && (s.process ?? 0) === process));
            this.droppedAt.set(`${command.jobId}/${process}`, Date.now());
          };
          if (this.stopDelayMs > 0) setTimeout(drop, this.stopDelayMs);
          else drop();
        },
        'take-savepoint': async (command) => {
          this.received.push({ command, at: Date.now() });
        },
        'move-key-groups': async (command) => {
          this.received.push({ command, at: Date.now() });
          return this.onMove(command);
        },
        'split-keys': async (command) => {
          this.received.push({ command, at: Date.now() });
        },
        'rescale-run': async (command, context) => {
          this.received.push({ command, at: Date.now() });
          if (!this.onRescale) throw new CommandRejectedError('this stand-in worker does not rescale runs live');
          return this.onRescale(command, context);
        },
      },
      { logger: silent },
    );
  }

  async start(): Promise<void> {
    await this.consumer.start();
    await this.reporter.start();
  }

  /** A clean shutdown: worker.stopping, then nothing (the registry marks it STOPPED). */
  async stop(): Promise<void> {
    await this.reporter.stop('test finished');
    await this.consumer.close();
  }

  commands<T extends WorkerCommand['type']>(type: T, jobId?: string): Extract<WorkerCommand, { type: T }>[] {
    return this.received
      .map((r) => r.command)
      .filter((c): c is Extract<WorkerCommand, { type: T }> => c.type === type && (jobId === undefined || c.jobId === jobId));
  }

  /** Sets the state of every subtask of one process of a job (LOST: its job host died, say). */
  set(jobId: string, process: number, state: RunningSubtask['state']): void {
    this.subtasks = this.subtasks.map((s) => (s.jobId === jobId && (s.process ?? 0) === process ? { ...s, state } : s));
  }

  reported(jobId: string): RunningSubtask[] {
    return this.subtasks.filter((s) => s.jobId === jobId);
  }

  private begin(command: RunSubtasks): void {
    const process = command.process?.index ?? 0;
    const state = this.autoRun ? 'RUNNING' : 'STARTING';
    const others = this.subtasks.filter((s) => !(s.jobId === command.jobId && (s.process ?? 0) === process));
    this.subtasks = [
      ...others,
      ...command.subtasks.map((s) => ({ tenantId: command.tenantId, jobId: command.jobId, operatorId: s.operatorId, subtask: s.subtask, state, process }) as const),
    ];
  }
}

/** What a worker reports for a move that went well: every key group asked for, 100 bytes and 1 ms each. */
export function reportOf(command: MoveKeyGroups, durationMs = 5): MoveReport {
  return { moveId: command.moveId, operatorId: command.operatorId, moved: command.moves.map((m) => ({ ...m, bytes: 100, pauseMs: 1 })), durationMs };
}
