/**
 * The in-memory inputs and outputs of a job run by the test driver: memory sources fed by hand, memory sinks and dead
 * letters read back, the clock ticked, and a wait until everything offered was handled. Test-only: a running job
 * keeps it under a symbol, and only @weir/engine's testing face (memoryIoOf) reaches it, so the worker's view of a
 * job (RunningJob) stays what a deployment needs.
 */
import type { CollectedRecord } from './connectors/sink-writers';
import type { DeadLetter } from './ports';
import type { MemorySourceRecord, RunningJob } from './running-job';

export interface JobMemoryIo {
  /** Feeds records to one subtask of a memory source. */
  push(sourceId: string, records: readonly MemorySourceRecord[], subtask?: number): void;
  pushWatermark(sourceId: string, watermark: number, subtask?: number): void;
  endSource(sourceId: string): void;
  /** Lets processing-time timers see a clock that moved (manual clocks). */
  tick(): void;
  /** Resolves once every message offered so far has been handled. */
  quiet(): Promise<void>;
  /** What a memorySink received, in order. */
  collected(sinkId: string): readonly CollectedRecord[];
  /** Dead letters kept in memory (a job without a dead-letter topic). */
  deadLetters(): readonly DeadLetter[];
}

export const MEMORY_IO = Symbol('weir.memoryIo');

/** The in-memory I/O of a job started by runJob (test driver and engine specs). */
export function memoryIoOf(job: RunningJob): JobMemoryIo {
  const io = (job as unknown as { [MEMORY_IO]?: JobMemoryIo })[MEMORY_IO];
  if (!io) throw new TypeError('not a job started by runJob');
  return io;
}
