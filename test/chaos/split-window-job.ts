/**
 * The splittable window job of the split tests: per key, a count and a sum over tumbling windows of WINDOW records of
 * event time (record i has event time i), exactly-once Kafka output; its input and the windows it must emit.
 */
import type { ProducedRecord } from '@weir/kafka';

export const SPLIT_MAX_PARALLELISM = 32;
export const WINDOW = 500;
/** Every node of the job, as a bundle's manifest lists them. */
export const SPLIT_OPERATORS = ['in', 'by-key', 'counts', 'counts-by-key', 'counts-merge', 'shape', 'out'];

export interface Window {
  readonly key: string;
  readonly start: number;
  readonly count: number;
  readonly sum: number;
}

/** Records from..to−1 of keys `keyOf(i)`, value i mod 7, spread over `partitions` by i. */
export function splitInput(topic: string, from: number, to: number, partitions: number, keyOf: (i: number) => string): ProducedRecord[] {
  const out: ProducedRecord[] = [];
  for (let i = from; i < to; i++) out.push({ topic, partition: i % partitions, value: JSON.stringify({ k: keyOf(i), i, v: i % 7 }) });
  return out;
}

/** The windows that close once records up to `upTo` are in (the watermark passes their end), from the input. */
export function expectedWindows(upTo: number, keyOf: (i: number) => string): Window[] {
  const byId = new Map<string, { key: string; start: number; count: number; sum: number }>();
  const closed = Math.floor((upTo - 2) / WINDOW) * WINDOW;
  for (let i = 0; i < closed; i++) {
    const start = i - (i % WINDOW);
    const id = `${keyOf(i)}@${start}`;
    const w = byId.get(id) ?? { key: keyOf(i), start, count: 0, sum: 0 };
    w.count++;
    w.sum += i % 7;
    byId.set(id, w);
  }
  return sortWindows([...byId.values()]);
}

export function sortWindows(windows: Window[]): Window[] {
  return windows.sort((a, b) => a.start - b.start || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** The windows of `read` (JSON values) that `expected` covers, for a comparison; duplicates kept. */
export function windowsUpTo(read: readonly { value: Buffer | null }[], expected: readonly Window[]): Window[] {
  const last = expected.at(-1)!.start;
  return sortWindows(read.map((r) => JSON.parse(r.value!.toString()) as Window).filter((w) => w.start <= last));
}

/** The job's TypeScript source: a splittable window (WindowOptions.splittable). */
export function splitWindowJobSource(input: string, output: string): string {
  return `
import { aggregate, defineJob, json, kafkaSink, kafkaSource, tumbling } from '@weir/engine';
type In = { k: string; i: number; v: number };
type Acc = { count: number; sum: number };
const counts = aggregate<string, In, Acc, Acc>({
  createAccumulator: () => ({ count: 0, sum: 0 }),
  add: (r, a) => ({ count: a.count + 1, sum: a.sum + r.v }),
  merge: (a, b) => ({ count: a.count + b.count, sum: a.sum + b.sum }),
  getResult: (a) => a,
});
export default defineJob({ name: 'split-windows', maxParallelism: ${SPLIT_MAX_PARALLELISM} }, (job) => {
  job
    .source('in', kafkaSource<In>({ topic: '${input}', format: json(), timestamps: (r) => r.i, watermarks: { maxOutOfOrdernessMs: 0 } }))
    .keyBy('by-key', (r) => r.k)
    .window('counts', tumbling(${WINDOW}), counts, { splittable: true })
    .map('shape', (w) => ({ key: w.key, start: w.start, count: w.result.count, sum: w.result.sum }))
    .sink('out', kafkaSink<{ key: string; start: number; count: number; sum: number }>({ topic: '${output}', format: json(), key: (w) => w.key }));
});
`;
}
