/**
 * The broadcast bootstrap of a fresh run over several processes (the engine's broadcast-bootstrap.ts), carried by the
 * run control: a broadcast source subtask that caught up is announced to every process, whose data sources wait for
 * all of them. The channel reaches only the processes reading when a message is published, so announcements wait
 * until every process of the run reads it: the leader's hello names them all (a process says ready once it reads).
 */
import type { BootstrapPeers } from '@weir/engine';
import type { RunControlChannel, RunControlMessage } from './run-control';

/** How long a failed announcement waits before it is published again (the data sources wait for it). */
const RETRY_MS = 1_000;

type Announcement = Extract<RunControlMessage, { type: 'broadcast-caught-up' }>;

export class BootstrapRelay implements BootstrapPeers {
  private everyoneReads = false;
  private readonly waiting: Announcement[] = [];
  private listener: ((stageId: string, subtask: number) => void) | null = null;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    /** The run's processes when it starts. */
    private readonly processes: number,
    private readonly channel: RunControlChannel,
  ) {}

  announce(stageId: string, subtask: number): void {
    this.waiting.push({ type: 'broadcast-caught-up', stageId, subtask });
    if (this.everyoneReads) this.publishWaiting();
  }

  listen(caughtUp: (stageId: string, subtask: number) => void): void {
    this.listener = caughtUp;
  }

  /** Every message of the run control, in its order. */
  onMessage(message: RunControlMessage): void {
    if (message.type === 'broadcast-caught-up') {
      this.listener?.(message.stageId, message.subtask);
    } else if (message.type === 'hello' && !this.everyoneReads && this.namesEveryone(message.ready)) {
      this.everyoneReads = true;
      this.publishWaiting();
    }
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.retry);
  }

  private namesEveryone(ready: readonly number[]): boolean {
    for (let p = 0; p < this.processes; p++) if (!ready.includes(p)) return false;
    return true;
  }

  private publishWaiting(): void {
    for (const announcement of this.waiting.splice(0)) {
      this.channel.publish(announcement).catch(() => {
        if (this.closed) return;
        this.waiting.push(announcement);
        clearTimeout(this.retry);
        this.retry = setTimeout(() => this.publishWaiting(), RETRY_MS);
      });
    }
  }
}
