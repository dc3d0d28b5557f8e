/**
 * npm run bench -- state [--keys N] [--runs R]
 *
 * Part 1, the keyed state backends through KeyedStateBackend (the path the engine runs): for N keys in batches of
 * 1,000, prefetch + put + flush; then N random reads in batches (prefetch + get) with a cache far smaller than the
 * state, so reads go to the store. Memory and LSM alternate within each run; figures are medians over the runs.
 * Part 2, the raw ordered stores (RocksDB vs LevelDB) through libs/state's internal store interface: the
 * measurement behind the store choice in docs/state.md (one run, batches interleaved). Ends with one JSON line.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, type Histogram } from 'hdr-histogram-js';
import { createStateBackend, type StateRef } from '@weir/state';
// Part 2 measures internals on purpose: the store interface is not part of @weir/state's public face.
import { encodeStateKey } from '../libs/state/src/keys/key-layout';
import { LevelStore } from '../libs/state/src/store/level-store';
import type { OrderedStore } from '../libs/state/src/store/ordered-store';
import { RocksStore } from '../libs/state/src/store/rocks-store';
import { numberArgument as argument } from './_arguments';

const BATCH = 1_000;
const KEY_GROUPS = 128;
const NAMESPACE = 'bench/aggregate';

const KEYS = argument('keys', 150_000);
const RUNS = argument('runs', 3);
const CACHE_ENTRIES = Math.max(1_000, Math.floor(KEYS / 20));

/** Deterministic PRNG (mulberry32) so every run reads the same sequence. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function makeRefs(count: number): StateRef[] {
  return Array.from({ length: count }, (_, i) => {
    const key = Buffer.allocUnsafe(8);
    key.writeUInt32BE(Math.imul(i, 2654435761) >>> 0, 0);
    key.writeUInt32BE(i, 4);
    return { keyGroup: i % KEY_GROUPS, namespace: NAMESPACE, key };
  });
}

function readOrder(count: number, seed: number): number[] {
  const next = random(seed);
  return Array.from({ length: count }, () => Math.floor(next() * count));
}

const histogram = (): Histogram => build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000 });

interface BackendRun {
  readonly putsPerS: number;
  readonly getsPerS: number;
  readonly flushUs: Histogram;
  readonly readBatchUs: Histogram;
}

async function runBackend(kind: 'memory' | 'lsm', refs: StateRef[], order: number[]): Promise<BackendRun> {
  const dir = mkdtempSync(join(tmpdir(), 'weir-bench-state-'));
  const backend = await createStateBackend({ kind, path: dir, cacheEntries: CACHE_ENTRIES });
  const flushUs = histogram();
  const readBatchUs = histogram();
  try {
    let started = performance.now();
    for (let from = 0; from < refs.length; from += BATCH) {
      const batch = refs.slice(from, from + BATCH);
      await backend.prefetch(batch);
      for (let i = 0; i < batch.length; i++) {
        const previous = backend.get<{ count: number; sum: number }>(batch[i], 0);
        backend.put(batch[i], { count: (previous?.count ?? 0) + 1, sum: from + i, last: 'event-payload' });
      }
      const flushStarted = performance.now();
      await backend.flush();
      flushUs.recordValue(Math.max(1, Math.round((performance.now() - flushStarted) * 1000)));
    }
    const putsPerS = refs.length / ((performance.now() - started) / 1000);

    let found = 0;
    started = performance.now();
    for (let from = 0; from < order.length; from += BATCH) {
      const batchStarted = performance.now();
      const batch = order.slice(from, from + BATCH).map((index) => refs[index]);
      await backend.prefetch(batch);
      for (const ref of batch) if (backend.get(ref, 0) !== undefined) found++;
      readBatchUs.recordValue(Math.max(1, Math.round((performance.now() - batchStarted) * 1000)));
    }
    const getsPerS = order.length / ((performance.now() - started) / 1000);
    if (found !== order.length) throw new Error(`${kind}: read back ${found} of ${order.length} values`);
    return { putsPerS, getsPerS, flushUs, readBatchUs };
  } finally {
    await backend.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface StoreRun {
  readonly putsPerS: number;
  readonly getsPerS: number;
}

type StoreName = 'rocksdb' | 'leveldb';

/**
 * Both stores load and read the same keys with batches interleaved (which store goes first alternates per batch),
 * so drift in the machine's load hits both alike.
 */
async function runStores(keys: Buffer[], order: number[]): Promise<Record<StoreName, StoreRun>> {
  const dirs = { rocksdb: mkdtempSync(join(tmpdir(), 'weir-bench-rocks-')), leveldb: mkdtempSync(join(tmpdir(), 'weir-bench-level-')) };
  const stores: Record<StoreName, OrderedStore> = {
    rocksdb: await RocksStore.open(dirs.rocksdb),
    leveldb: await LevelStore.open(dirs.leveldb),
  };
  const value = Buffer.alloc(100, 0x5a);
  const putMs = { rocksdb: 0, leveldb: 0 };
  const getMs = { rocksdb: 0, leveldb: 0 };
  const turns = (batch: number): StoreName[] => (batch % 2 === 0 ? ['rocksdb', 'leveldb'] : ['leveldb', 'rocksdb']);
  try {
    for (let from = 0; from < keys.length; from += BATCH) {
      const writes = keys.slice(from, from + BATCH).map((key) => ({ kind: 'put' as const, key, value }));
      for (const name of turns(from / BATCH)) {
        const started = performance.now();
        await stores[name].writeBatch(writes);
        putMs[name] += performance.now() - started;
      }
    }
    for (let from = 0; from < order.length; from += BATCH) {
      const batch = order.slice(from, from + BATCH).map((index) => keys[index]);
      for (const name of turns(from / BATCH)) {
        const started = performance.now();
        const values = await stores[name].getMany(batch);
        getMs[name] += performance.now() - started;
        if (values.some((v) => v === undefined)) throw new Error(`${name}: a written key read back as absent`);
      }
    }
    const figures = (name: StoreName): StoreRun => ({
      putsPerS: keys.length / (putMs[name] / 1000),
      getsPerS: order.length / (getMs[name] / 1000),
    });
    return { rocksdb: figures('rocksdb'), leveldb: figures('leveldb') };
  } finally {
    for (const name of ['rocksdb', 'leveldb'] as const) {
      await stores[name].close();
      rmSync(dirs[name], { recursive: true, force: true });
    }
  }
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const pct = (h: Histogram): string =>
  `${fmt(h.getValueAtPercentile(50))} / ${fmt(h.getValueAtPercentile(99))} / ${fmt(h.maxValue)}`;

async function main(): Promise<void> {
  const refs = makeRefs(KEYS);
  const order = readOrder(KEYS, 42);

  // Warm-up (JIT, native thread pool, page cache), not counted.
  const warm = makeRefs(Math.min(KEYS, 20_000));
  const warmOrder = readOrder(warm.length, 7);
  await runBackend('memory', warm, warmOrder);
  await runBackend('lsm', warm, warmOrder);

  const runs: Record<'memory' | 'lsm', BackendRun[]> = { memory: [], lsm: [] };
  for (let run = 0; run < RUNS; run++) {
    const kinds = run % 2 === 0 ? (['memory', 'lsm'] as const) : (['lsm', 'memory'] as const);
    for (const kind of kinds) runs[kind].push(await runBackend(kind, refs, order));
  }

  const storeRuns = await runStores(
    refs.map((ref) => encodeStateKey(ref)),
    order,
  );

  const figures = (list: { putsPerS: number; getsPerS: number }[]) => ({
    puts: median(list.map((r) => r.putsPerS)),
    gets: median(list.map((r) => r.getsPerS)),
  });
  const memory = figures(runs.memory);
  const lsm = figures(runs.lsm);
  const rocks = figures([storeRuns.rocksdb]);
  const level = figures([storeRuns.leveldb]);
  const last = (kind: 'memory' | 'lsm') => runs[kind][runs[kind].length - 1];

  console.log(`\nkeyed state backends: ${fmt(KEYS)} keys, batches of ${BATCH}, cache ${fmt(CACHE_ENTRIES)} entries, ${RUNS} runs (medians)`);
  console.log('| backend | puts/s (prefetch+put+flush) | random gets/s (prefetch+get) | flush µs p50/p99/max | read batch µs p50/p99/max |');
  console.log('|---|---|---|---|---|');
  for (const kind of ['memory', 'lsm'] as const) {
    const f = kind === 'memory' ? memory : lsm;
    console.log(`| ${kind} | ${fmt(f.puts)} | ${fmt(f.gets)} | ${pct(last(kind).flushUs)} | ${pct(last(kind).readBatchUs)} |`);
  }
  console.log(`\nraw ordered stores: ${fmt(KEYS)} keys, 100-byte values, batches of ${BATCH} interleaved, one run`);
  console.log('| store | batched puts/s | batched random gets/s |');
  console.log('|---|---|---|');
  console.log(`| rocksdb-native | ${fmt(rocks.puts)} | ${fmt(rocks.gets)} |`);
  console.log(`| classic-level | ${fmt(level.puts)} | ${fmt(level.gets)} |`);
  console.log(
    JSON.stringify({
      bench: 'state',
      keys: KEYS,
      runs: RUNS,
      lsm_vs_memory_puts: +(lsm.puts / memory.puts).toFixed(3),
      lsm_vs_memory_gets: +(lsm.gets / memory.gets).toFixed(3),
      lsm_puts_per_s: Math.round(lsm.puts),
      lsm_gets_per_s: Math.round(lsm.gets),
      memory_puts_per_s: Math.round(memory.puts),
      memory_gets_per_s: Math.round(memory.gets),
      rocksdb_puts_per_s: Math.round(rocks.puts),
      rocksdb_gets_per_s: Math.round(rocks.gets),
      leveldb_puts_per_s: Math.round(level.puts),
      leveldb_gets_per_s: Math.round(level.gets),
    }),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
