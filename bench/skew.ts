/**
 * npm run bench -- skew [--records N] [--keys K] [--seed S] [--epoch E] [--cap R] [--throughput-records M] [--pairs P] [--autoscaler-cap R] [--steady-s S] [--skip throughput,autoscaler] [--verbose]
 *
 * Load imbalance under key skew, in one process, from the partitioner's own planner and router code on a seeded Zipf
 * stream (libs/datagen): K keys, N records, 128 key groups (the engine's hashing: keyGroupOfKey), for Zipf z × n
 * subtasks. Three routings of the same records:
 * - hash: static hashing, key → key group → its default owner (the engine's contiguous ranges);
 * - PKG: Partial Key Grouping (Nasir et al., ICDE 2015): each key has two distinct candidate subtasks (from two
 *   seeded murmur3 hashes) and a record goes to the one with less load so far (the global count: PKG at its best);
 * - Weir: the stream is routed by SplitRouter under the current layout, each subtask measures what it gets with
 *   SubtaskMetrics (exact key-group counts, the sampled heavy-hitters sketch: the engine's defaults), and after every
 *   interval of E records loadModelFromSnapshots + planPartitioning decide (default policy, cool-downs on, one interval
 *   standing for 60 s; a decision its budget stopped is continued by the next) and applyDecision gives the next
 *   layout — until a decision does nothing (or 12 decisions).
 * Imbalance = max ÷ mean subtask load over the records routed after Weir's last decision (all three on those same
 * records); subtasks_per_key_weir = the mean number of subtasks that received records of a key, over the keys that
 * received records then (a split key counts its k, every other key 1).
 * throughput_ratio (z = 1.2, n = 8): the engine's real path with every keyed subtask capped at R records/s, static
 * hashing against Weir's converged layout (moves and split keys applied to the running job), on M records of the same
 * stream after Weir's last decision; P pairs alternating, the median ratio (_skew-engine.ts). p99_ratio: Weir ÷ static
 * p99 of window results' event-time latency (100 ms tumbling windows, event time = processing time), the stream fed
 * for 15 s at 80% of static hashing's measured capacity. One process stands for the fleet.
 * scale_steps_up, scale_steps_down, rescales_per_hour_steady: a real deployment in autoscaler mode auto over capped job
 * hosts, through load steps (_skew-autoscaler.ts). migration_max_ms and viral_p99_ratio: null (not built). Ends with
 * one JSON line.
 */
import { seededRandom, zipfSampler, zipfTopShare } from '@weir/datagen';
import { defaultOwnerOf, encodeKey, keyGroupOfKey, murmur3 } from '@weir/engine';
import { SubtaskMetrics } from '@weir/metrics';
import {
  applyDecision,
  changedKeyGroups,
  loadModelFromSnapshots,
  planPartitioning,
  SplitRouter,
  unsplitLayout,
  type PartitionLayout,
} from '@weir/partitioner';
import { argument } from './_arguments';
import { autoscalerFigures, type AutoscalerFigures } from './_skew-autoscaler';
import { cappedLatency, cappedThroughput } from './_skew-engine';

const RECORDS = Number(argument('records', '2000000'));
const KEYS = Number(argument('keys', '100000'));
const SEED = Number(argument('seed', '20260515'));
/** Records per metrics interval: one planning decision after each. */
const EPOCH = Number(argument('epoch', '50000'));
const MAX_DECISIONS = 12;
const INTERVAL_MS = 60_000;
const MAX_PARALLELISM = 128;
const ZS = [0.8, 1.0, 1.2, 1.5];
const NS = [4, 8, 16];
/** --verbose: one line per decision (predicted imbalance before → after, what it did, what it declined). */
const VERBOSE = process.argv.includes('--verbose');
const PKG_SEEDS = [0x9747b28c, 0x85ebca6b];
const CAP = Number(argument('cap', '5000'));
const THROUGHPUT_RECORDS = Number(argument('throughput-records', '200000'));
const PAIRS = Number(argument('pairs', '2'));
const SKIP = argument('skip', '').split(',');
/** The autoscaler case's cap per keyed subtask (records/s), and how long it holds the load steady at the end. */
const AUTOSCALER_CAP = Number(argument('autoscaler-cap', '500'));
const STEADY_S = Number(argument('steady-s', '120'));
/** The latency figure feeds this many seconds of the stream at 80% of static hashing's measured capacity. */
const LATENCY_SECONDS = Number(argument('latency-seconds', '15'));

interface Keys {
  readonly names: string[];
  readonly keyGroups: Int32Array;
  readonly pkgHashes: [Uint32Array, Uint32Array];
}

interface Cell {
  z: number;
  n: number;
  top: number;
  hash: number;
  pkg: number;
  weir: number;
  perKeyWeir: number;
  perKeyPkg: number;
  decisions: number;
  moves: number;
  splits: string;
  measured: number;
  layout: PartitionLayout;
  from: number;
}

function prepareKeys(): Keys {
  const names = Array.from({ length: KEYS }, (_, rank) => `key-${rank}`);
  const keyGroups = Int32Array.from(names, (name) => keyGroupOfKey(name, MAX_PARALLELISM));
  const bytes = names.map((name) => encodeKey(name));
  const pkgHashes: [Uint32Array, Uint32Array] = [
    Uint32Array.from(bytes, (b) => murmur3(b, PKG_SEEDS[0])),
    Uint32Array.from(bytes, (b) => murmur3(b, PKG_SEEDS[1])),
  ];
  return { names, keyGroups, pkgHashes };
}

function stream(z: number): Int32Array {
  const sample = zipfSampler(KEYS, z, seededRandom(SEED + Math.round(z * 1000)));
  const ranks = new Int32Array(RECORDS);
  for (let i = 0; i < RECORDS; i++) ranks[i] = sample();
  return ranks;
}

function imbalance(loads: Float64Array): number {
  let max = 0;
  let sum = 0;
  for (const l of loads) {
    max = Math.max(max, l);
    sum += l;
  }
  return sum > 0 ? max / (sum / loads.length) : 1;
}

/** Weir: decisions until one does nothing; returns the layout in force and the first record routed under it. */
function converge(keys: Keys, ranks: Int32Array, n: number): { layout: PartitionLayout; from: number; decisions: number; moves: number } {
  const owners = Array.from({ length: MAX_PARALLELISM }, (_, kg) => defaultOwnerOf(kg, n, MAX_PARALLELISM));
  let layout = unsplitLayout(n, owners);
  let router = SplitRouter.fromLayout(layout);
  const lastChangedAtMs: Record<number, number> = {};
  const metrics = Array.from(
    { length: n },
    (_, subtask) => new SubtaskMetrics({ identity: { tenantId: 'bench', jobId: 'skew', operatorId: 'count', subtask }, maxParallelism: MAX_PARALLELISM, nowMs: 0 }),
  );
  let at = 0;
  let decisions = 0;
  let moves = 0;
  let continuing = false;
  try {
    for (let epoch = 1; epoch <= MAX_DECISIONS && at + EPOCH < RECORDS; epoch++) {
      for (const end = at + EPOCH; at < end; at++) {
        const rank = ranks[at];
        const name = keys.names[rank];
        const kg = keys.keyGroups[rank];
        metrics[router.route(name, kg, at)].offerKey(name, kg);
      }
      const nowMs = epoch * INTERVAL_MS;
      const snapshots = metrics.map((m) => m.snapshot(nowMs, null));
      const load = loadModelFromSnapshots(snapshots, layout);
      const decision = planPartitioning({ layout, load, nowMs, lastChangedAtMs, splittable: true, continuing });
      if (VERBOSE) console.log(`    n=${n} epoch ${epoch}: ${decision.imbalanceBefore.toFixed(3)} → ${decision.imbalanceAfter.toFixed(3)} moves ${decision.moves.length} splits ${decision.splits.map((s) => s.change + ":" + s.subtasks.length).join(",")} declined ${decision.declined.map((d) => d.reason).join(",")}`);
      continuing = false;
      if (!decision.acted) {
        if (decision.declined.some((d) => d.reason === 'cool-down')) continue;
        break;
      }
      decisions++;
      continuing = decision.unfinished;
      moves += decision.moves.length;
      layout = applyDecision(layout, decision);
      for (const kg of changedKeyGroups(decision)) lastChangedAtMs[kg] = nowMs;
      router = SplitRouter.fromLayout(layout);
    }
  } finally {
    for (const m of metrics) m.close();
  }
  return { layout, from: at, decisions, moves };
}

function popcount(x: number): number {
  let c = 0;
  for (; x !== 0; x &= x - 1) c++;
  return c;
}

function meanHolders(holders: Int32Array): number {
  let keys = 0;
  let sum = 0;
  for (const mask of holders) {
    if (mask === 0) continue;
    keys++;
    sum += popcount(mask);
  }
  return keys > 0 ? sum / keys : 1;
}

function measureCell(keys: Keys, ranks: Int32Array, z: number, n: number): Cell {
  const weir = converge(keys, ranks, n);
  const router = SplitRouter.fromLayout(weir.layout);
  const hashLoads = new Float64Array(n);
  const pkgLoads = new Float64Array(n);
  const pkgSoFar = new Float64Array(n);
  const weirLoads = new Float64Array(n);
  const weirHolders = new Int32Array(KEYS);
  const pkgHolders = new Int32Array(KEYS);
  for (let i = 0; i < RECORDS; i++) {
    const rank = ranks[i];
    const a = keys.pkgHashes[0][rank] % n;
    // The second choice is always another subtask (PKG at its best: a hot key never gets one choice by collision).
    const b = (a + 1 + (keys.pkgHashes[1][rank] % (n - 1))) % n;
    const pkg = pkgSoFar[b] < pkgSoFar[a] ? b : a;
    pkgSoFar[pkg]++;
    if (i < weir.from) continue;
    const kg = keys.keyGroups[rank];
    hashLoads[defaultOwnerOf(kg, n, MAX_PARALLELISM)]++;
    pkgLoads[pkg]++;
    pkgHolders[rank] |= 1 << pkg;
    const s = router.route(keys.names[rank], kg, i);
    weirLoads[s]++;
    weirHolders[rank] |= 1 << s;
  }
  return {
    z,
    n,
    top: zipfTopShare(KEYS, z),
    hash: imbalance(hashLoads),
    pkg: imbalance(pkgLoads),
    weir: imbalance(weirLoads),
    perKeyWeir: meanHolders(weirHolders),
    perKeyPkg: meanHolders(pkgHolders),
    decisions: weir.decisions,
    moves: weir.moves,
    splits: weir.layout.splits.map((s) => s.subtasks.length).sort((x, y) => y - x).join('+') || '-',
    measured: RECORDS - weir.from,
    layout: weir.layout,
    from: weir.from,
  };
}

function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
}

/**
 * Weir ÷ static records/s through the capped engine, P pairs alternating (each pair's ratio printed), and static's
 * median records/s (the load the latency figure is taken at a share of).
 */
async function throughputRatio(names: readonly string[], cell: Cell): Promise<{ ratio: number; staticRate: number }> {
  const ratios: number[] = [];
  const rates: number[] = [];
  for (let pair = 1; pair <= PAIRS; pair++) {
    const hashed = await cappedThroughput(names, cell.n, MAX_PARALLELISM, CAP, null);
    const weir = await cappedThroughput(names, cell.n, MAX_PARALLELISM, CAP, cell.layout);
    ratios.push(weir.recordsPerSec / hashed.recordsPerSec);
    rates.push(hashed.recordsPerSec);
    console.log(
      `  pair ${pair}: static ${Math.round(hashed.recordsPerSec).toLocaleString('en')} records/s (${hashed.seconds.toFixed(1)} s), Weir ${Math.round(weir.recordsPerSec).toLocaleString('en')} records/s (${weir.seconds.toFixed(1)} s): ${ratios.at(-1)!.toFixed(3)}×`,
    );
  }
  return { ratio: median(ratios), staticRate: median(rates) };
}

/** Weir ÷ static window-result p99 at `perSecond` through the capped engine, P pairs alternating; the median. */
async function latencyRatio(names: readonly string[], cell: Cell, perSecond: number): Promise<number> {
  const ratios: number[] = [];
  const seconds = Math.min(LATENCY_SECONDS, names.length / perSecond);
  const fed = names.slice(0, Math.floor(seconds * perSecond));
  for (let pair = 1; pair <= PAIRS; pair++) {
    const hashed = await cappedLatency(fed, cell.n, MAX_PARALLELISM, CAP, perSecond, null);
    const weir = await cappedLatency(fed, cell.n, MAX_PARALLELISM, CAP, perSecond, cell.layout);
    ratios.push(weir.p99Ms / hashed.p99Ms);
    console.log(
      `  pair ${pair}: static p99 ${hashed.p99Ms} ms (max ${hashed.maxMs}, ${hashed.windows.toLocaleString('en')} window results), Weir p99 ${weir.p99Ms} ms (max ${weir.maxMs}, ${weir.windows.toLocaleString('en')}): ${ratios.at(-1)!.toFixed(3)}`,
    );
  }
  return median(ratios);
}

async function main(): Promise<void> {
  const started = Date.now();
  console.log(`skew bench: ${KEYS.toLocaleString('en')} keys, ${RECORDS.toLocaleString('en')} records per z (Zipf, seed ${SEED}), ${MAX_PARALLELISM} key groups, one run;`);
  console.log(`Weir: a decision per ${EPOCH.toLocaleString('en')} records (default policy: act above 1.1, aim 1.05, ≤16 moves a decision, 5 min cool-down), imbalance on the records after its last one`);
  const keys = prepareKeys();
  const cells: Cell[] = [];
  console.log('| z | n | hottest key share | hash | PKG | Weir | subtasks/key Weir | subtasks/key PKG | decisions | moves | split keys (k) | records measured |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const z of ZS) {
    const ranks = stream(z);
    for (const n of NS) {
      const c = measureCell(keys, ranks, z, n);
      cells.push(c);
      console.log(
        `| ${c.z.toFixed(1)} | ${c.n} | ${c.top.toFixed(3)} | ${c.hash.toFixed(2)} | ${c.pkg.toFixed(2)} | ${c.weir.toFixed(2)} | ${c.perKeyWeir.toFixed(4)} | ${c.perKeyPkg.toFixed(3)} | ${c.decisions} | ${c.moves} | ${c.splits} | ${c.measured.toLocaleString('en')} |`,
      );
    }
  }
  const worst = cells.reduce((a, c) => (c.weir > a.weir ? c : a));
  console.log(`worst Weir cell: z=${worst.z} n=${worst.n} at ${worst.weir.toFixed(3)} (goal ≤ 1.1 everywhere, subtasks/key ≤ 1.05); ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const line = cells.find((c) => c.z === 1.2 && c.n === 8) as Cell;
  let throughput: number | null = null;
  let p99: number | null = null;
  if (!SKIP.includes('throughput')) {
    const names = Array.from(stream(line.z).subarray(line.from), (rank) => keys.names[rank]);
    console.log(
      `throughput (z=1.2, n=8): ${THROUGHPUT_RECORDS.toLocaleString('en')} records through the engine (keyBy → splittable window), every keyed subtask capped at ${CAP.toLocaleString('en')} records/s, one process standing for 8 machines; Weir's layout: ${line.moves} moves, split keys ${line.splits}`,
    );
    const measured = await throughputRatio(names.slice(0, THROUGHPUT_RECORDS), line);
    throughput = measured.ratio;
    console.log(`throughput_ratio (median of ${PAIRS}): ${throughput.toFixed(3)} (goal ≥ 1.5)`);
    const rate = Math.round(0.8 * measured.staticRate);
    console.log(`latency (z=1.2, n=8): ${LATENCY_SECONDS} s at ${rate.toLocaleString('en')} records/s (80% of static hashing's capacity), 100 ms tumbling windows, same caps`);
    p99 = await latencyRatio(names, line, rate);
    console.log(`p99_ratio (median of ${PAIRS}): ${p99.toFixed(3)} (goal ≤ 0.3)`);
  }
  let autoscaler: AutoscalerFigures | null = null;
  if (!SKIP.includes('autoscaler')) {
    console.log(
      `autoscaler: a deployment of the totals job in mode auto on ${4} workers of one slot, each keyed subtask capped at ${AUTOSCALER_CAP} records/s (each job host process stands for one machine); load steps 60% of 2 subtasks → 2× → 0.5×, then ${STEADY_S} s steady`,
    );
    autoscaler = await autoscalerFigures({ cap: AUTOSCALER_CAP, steadyS: STEADY_S });
    console.log(
      `  scale_steps_up ${autoscaler.scale_steps_up} · scale_steps_down ${autoscaler.scale_steps_down} (goal ≤ 2 each) · ${autoscaler.overshoot ? 'OVERSHOOT' : 'no overshoot'} · path ${autoscaler.path} · rescales_per_hour_steady ${autoscaler.rescales_per_hour_steady} (goal 0)`,
    );
  }
  console.log('migration_max_ms, viral_p99_ratio: null — they need a window-move protocol across processes and a splittable fraud job (not built)');
  console.log(
    JSON.stringify({
      bench: 'skew',
      z: line.z,
      n: line.n,
      imbalance_hash: round(line.hash),
      imbalance_pkg: round(line.pkg),
      imbalance_weir: round(line.weir),
      subtasks_per_key_weir: Number(line.perKeyWeir.toFixed(5)),
      p99_ratio: p99 === null ? null : round(p99),
      throughput_ratio: throughput === null ? null : round(throughput),
      migration_max_ms: null,
      scale_steps_up: autoscaler?.scale_steps_up ?? null,
      scale_steps_down: autoscaler?.scale_steps_down ?? null,
      rescales_per_hour_steady: autoscaler?.rescales_per_hour_steady ?? null,
      viral_p99_ratio: null,
    }),
  );
}

function round(x: number): number {
  return Number(x.toFixed(3));
}

main().catch((err: Error) => {
  console.error(err);
  process.exit(1);
});
