/**
 * A live rescale of a Kafka source (plan.ts, sourceRescalesLive): its partitions move between its subtasks, which
 * may run in different processes, and its subtask count changes. A partition's records never pass each other: the
 * old owner stops reading it between two polls and hands over only once everything it read from it is in the
 * exchange; the new owner reads on from that offset, its watermark first. No state moves: a source has none but its
 * offsets, and a barrier offered after the move names the partition in its new owner's part.
 */
import { KafkaPump, type PartitionHandover } from './connectors/sources';
import { inBand } from './in-band';
import { JobRunError } from './running-job';
import type { StageRuntime } from './stage-runtime';

export async function releaseSourcePartition(rt: StageRuntime, partition: number): Promise<PartitionHandover> {
  const subtask = rt.local.find((i) => kafkaPump(rt, i)?.partitions.includes(partition));
  if (subtask === undefined) throw new JobRunError(`no subtask of source "${rt.plan.id}" reads partition ${partition} in this process`);
  const handover = await kafkaPump(rt, subtask)!.releasePartition(partition);
  // In-band, after every record offered from the partition: once the exchange holds them, whatever its new owner
  // writes of the same keys lies behind them in every key group's partition.
  await inBand(rt.queues[subtask], async () => {
    await Promise.all(rt.keyedSenders.filter((s) => s.subtask === subtask).map((s) => s.sender.drain()));
  });
  return handover;
}

export function adoptSourcePartition(rt: StageRuntime, partition: number, toSubtask: number, handover: PartitionHandover): Promise<void> {
  const pump = kafkaPump(rt, toSubtask);
  if (!pump) throw new JobRunError(`subtask ${toSubtask} of source "${rt.plan.id}" does not run in this process`);
  return pump.adoptPartition(partition, handover);
}

/**
 * The source's subtask count across the run changed (its partitions have moved already): barriers say the new count
 * from now on, and the subtasks here that retired end their output channels, after everything they sent, and stop.
 */
export async function resizeSource(rt: StageRuntime, parallelism: number): Promise<void> {
  const reading = rt.local.filter((i) => i >= parallelism && (kafkaPump(rt, i)?.partitions.length ?? 0) > 0);
  if (reading.length > 0) {
    throw new JobRunError(`source "${rt.plan.id}" cannot go to ${parallelism} subtasks: its subtask ${reading[0]} still reads partitions ${kafkaPump(rt, reading[0])!.partitions.join(', ')}`);
  }
  rt.sourceParallelism = parallelism;
  for (const { sender } of rt.keyedSenders) sender.senders = parallelism;
  const retired = rt.keyedSenders.filter(({ subtask }) => subtask >= parallelism);
  await Promise.all(retired.map(({ subtask, sender }) => inBand(rt.queues[subtask], () => sender.sendEnd(subtask, parallelism))));
  for (const i of rt.local) if (i >= parallelism) rt.pumps[i]?.stop();
}

function kafkaPump(rt: StageRuntime, subtask: number): KafkaPump | undefined {
  const pump = rt.pumps[subtask];
  return pump instanceof KafkaPump ? pump : undefined;
}
