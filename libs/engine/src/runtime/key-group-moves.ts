/**
 * Live key-group moves: pause the key group's input, hand its state (timers included) from the old owner to the new
 * one in-band, resume on the new owner. How the input pauses depends on the exchange.
 */
import type { RoutingTable } from '../keygroups';
import type { KeyGroupMove } from './exchange/exchange';
import type { KafkaExchangePump } from './exchange/kafka-exchange-reader';
import { inBand } from './in-band';
import { JobRunError } from './running-job';
import type { StageRuntime } from './stage-runtime';

/** In memory the exchange holds the moving key groups' records while the state moves (see MemoryKeyedExchange). */
export function moveInMemory(rt: StageRuntime, moves: readonly KeyGroupMove[]): Promise<RoutingTable> {
  return rt.exchange!.move(moves, async (keyGroup, from, to) => {
    const image = await inBand(rt.queues[from], () => rt.operators[from].releaseKeyGroup(keyGroup));
    await inBand(rt.queues[to], () => rt.operators[to].adoptKeyGroup(keyGroup, image));
  });
}

/**
 * Over the Kafka exchange the records of a moving key group wait in its partition: the old owner stops reading it
 * and hands over its state in-band after the records it already read; the new owner restores that state and reads
 * on from the old owner's offset. Both subtasks must run in this process. Moves run one after another.
 */
export class KafkaKeyGroupMoves {
  private previous: Promise<void> = Promise.resolve();

  move(rt: StageRuntime, moves: readonly KeyGroupMove[]): Promise<RoutingTable> {
    const run = this.previous.then(async () => {
      for (const { keyGroup, toSubtask } of moves) {
        const from = rt.routing!.ownerOf(keyGroup);
        if (from === toSubtask) continue;
        const next = rt.routing!.withMoves([{ keyGroup, toSubtask }]);
        if (!rt.operators[from] || !rt.operators[toSubtask]) {
          throw new JobRunError(`moving key group ${keyGroup} needs subtasks ${from} and ${toSubtask} of "${rt.plan.id}" in this process`);
        }
        const fromPump = rt.pumps[from] as KafkaExchangePump;
        const toPump = rt.pumps[toSubtask] as KafkaExchangePump;
        const offset = await fromPump.release(keyGroup);
        const image = await inBand(rt.queues[from], () => rt.operators[from].releaseKeyGroup(keyGroup));
        await inBand(rt.queues[toSubtask], () => rt.operators[toSubtask].adoptKeyGroup(keyGroup, image));
        await toPump.adopt(keyGroup, offset);
        rt.routing = next;
      }
      return rt.routing!;
    });
    this.previous = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }
}

/** A key group on its way to a subtask in another process: its state and where its partition's reading goes on. */
export interface KeyGroupHandover {
  /** Self-contained (timers included): what adoptKeyGroup restores. */
  readonly image: Uint8Array;
  /** The exchange partition's offset after the last record the old owner handled. */
  readonly offset: string;
}

/**
 * The two halves of a live move between processes over the Kafka exchange, each run in its own process: the old
 * owner releases (stops reading the partition between two polls, hands the state over in-band after the records it
 * read, drops it), the new owner adopts (restores in-band, reads on from the offset). The records in between wait in
 * the key group's partition. Each process's routing table names the new owner once its half is done.
 */
export async function releaseToProcess(rt: StageRuntime, keyGroup: number, toSubtask: number): Promise<KeyGroupHandover> {
  const from = rt.routing!.ownerOf(keyGroup);
  if (!rt.operators[from]) throw new JobRunError(`key group ${keyGroup} of "${rt.plan.id}" belongs to subtask ${from}, not run in this process`);
  const offset = await (rt.pumps[from] as KafkaExchangePump).release(keyGroup);
  const image = await inBand(rt.queues[from], () => rt.operators[from].releaseKeyGroup(keyGroup));
  rt.routing = rt.routing!.withMoves([{ keyGroup, toSubtask }]);
  return { image, offset };
}

export async function adoptFromProcess(rt: StageRuntime, keyGroup: number, toSubtask: number, handover: KeyGroupHandover): Promise<void> {
  if (!rt.operators[toSubtask]) throw new JobRunError(`subtask ${toSubtask} of "${rt.plan.id}" does not run in this process`);
  await inBand(rt.queues[toSubtask], () => rt.operators[toSubtask].adoptKeyGroup(keyGroup, handover.image));
  await (rt.pumps[toSubtask] as KafkaExchangePump).adopt(keyGroup, handover.offset);
  rt.routing = rt.routing!.withMoves([{ keyGroup, toSubtask }]);
}
