/**
 * Live key-group moves: pause the key group's input, hand its state (timers included) from the old owner to the new
 * one in-band, resume on the new owner. How the input pauses depends on the exchange.
 */
import { pack, unpack } from 'msgpackr';
import type { RoutingTable } from '../keygroups';
import type { KeyGroupMove } from './exchange/exchange';
import type { KafkaExchangePump, ReaderStanding } from './exchange/kafka-exchange-reader';
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
        const handover = await releaseFrom(rt, from, keyGroup);
        await adoptInto(rt, toSubtask, keyGroup, handover);
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

/** A key group on its way to another subtask: its state and where its partition's reading goes on. */
export interface KeyGroupHandover {
  /** Self-contained (timers included): what adoptKeyGroup restores. */
  readonly image: Uint8Array;
  /** The exchange partition's offset after the last record the old owner handled. */
  readonly offset: string;
  /**
   * The old owner's standing at that offset (its reader's ReaderStanding and its operator state, e.g. broadcast
   * state), packed: what a subtask that joined the run takes over with its first key group.
   */
  readonly standing: Uint8Array;
}

interface Standing {
  readonly reader: ReaderStanding;
  readonly operatorState: unknown;
}

/**
 * The old owner's half: its reader stops reading the partition between two polls and, at that very point, queues the
 * state's release in-band, after exactly the records it handed on; the state is then dropped here.
 */
async function releaseFrom(rt: StageRuntime, from: number, keyGroup: number): Promise<KeyGroupHandover> {
  const operator = rt.operators[from];
  const { offset, handedOver } = await (rt.pumps[from] as KafkaExchangePump).release(keyGroup, (reader) =>
    inBand(rt.queues[from], async () => {
      const image = await operator.releaseKeyGroup(keyGroup);
      return { image, standing: pack({ reader, operatorState: operator.snapshotOperatorState() } satisfies Standing) };
    }),
  );
  const { image, standing } = await handedOver;
  return { image, offset, standing };
}

/** The new owner's half: restores the state in-band, then reads the partition on from the old owner's offset. */
async function adoptInto(rt: StageRuntime, toSubtask: number, keyGroup: number, handover: KeyGroupHandover): Promise<void> {
  const operator = rt.operators[toSubtask];
  const pump = rt.pumps[toSubtask] as KafkaExchangePump;
  const standing = pump.awaitsFirstKeyGroup ? (unpack(handover.standing) as Standing) : null;
  await inBand(rt.queues[toSubtask], async () => {
    if (standing && standing.operatorState !== null && standing.operatorState !== undefined) operator.restoreOperatorState(standing.operatorState);
    await operator.adoptKeyGroup(keyGroup, handover.image);
  });
  await pump.adopt(keyGroup, handover.offset, standing?.reader);
}

/**
 * The two halves of a live move between processes over the Kafka exchange, each run in its own process: the old
 * owner releases (stops reading the partition between two polls, hands the state over in-band after the records it
 * read, drops it), the new owner adopts (restores in-band, reads on from the offset). The records in between wait in
 * the key group's partition. Each process's routing table names the new owner once its half is done (widened first
 * when the new owner is a subtask that joined the run in a live rescale).
 */
export async function releaseToProcess(rt: StageRuntime, keyGroup: number, toSubtask: number): Promise<KeyGroupHandover> {
  const from = rt.routing!.ownerOf(keyGroup);
  if (!rt.operators[from]) throw new JobRunError(`key group ${keyGroup} of "${rt.plan.id}" belongs to subtask ${from}, not run in this process`);
  const handover = await releaseFrom(rt, from, keyGroup);
  rt.routing = routedTo(rt.routing!, keyGroup, toSubtask);
  return handover;
}

export async function adoptFromProcess(rt: StageRuntime, keyGroup: number, toSubtask: number, handover: KeyGroupHandover): Promise<void> {
  if (!rt.operators[toSubtask]) throw new JobRunError(`subtask ${toSubtask} of "${rt.plan.id}" does not run in this process`);
  await adoptInto(rt, toSubtask, keyGroup, handover);
  rt.routing = routedTo(rt.routing!, keyGroup, toSubtask);
}

/** The table with `keyGroup` owned by `toSubtask`, widened first if that subtask joined the run in a live rescale. */
export function routedTo(table: RoutingTable, keyGroup: number, toSubtask: number): RoutingTable {
  const wide = toSubtask < table.parallelism ? table : table.withParallelism(toSubtask + 1);
  return wide.withMoves([{ keyGroup, toSubtask }]);
}
