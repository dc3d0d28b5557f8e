/**
 * Profiling aid for the window path of bench/engine.ts (not a benchmark; no JSON line):
 *   node -r @swc-node/register bench/_profile-window.ts [--records N] [--state memory] [--immutable] [--collect] [--warmup W] [--profile FILE]
 * Results are counted by a callbackSink as bench/engine.ts does; `--collect` keeps them in a memorySink instead.
 * `--warmup W` runs the job W times uncounted first (as bench/engine.ts does), so the profile shows optimised code.
 * `--profile FILE` writes a CPU profile of the job run alone (not of start-up and input generation) to FILE.
 * Runs the same job as engine_vs_loop once and prints wall time and this process's CPU time for it, because on a
 * shared machine CPU time says more about the code than wall time does.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStateBackend } from '@weir/state';
import { aggregate, callbackSink, defineJob, generatorSource, memorySink, runJob, tumbling, memoryIoOf } from '@weir/engine';

const at = process.argv.indexOf('--records');
const RECORDS = at === -1 ? 300_000 : Number(process.argv[at + 1]);
const memory = process.argv.includes('memory');
/** `--immutable`: a new accumulator per record instead of bench/engine.ts' in-place one. */
const immutable = process.argv.includes('--immutable');
const profileAt = process.argv.indexOf('--profile');
const profileFile = profileAt === -1 ? undefined : process.argv[profileAt + 1];
const collect = process.argv.includes('--collect');
let counted = 0;
const warmupAt = process.argv.indexOf('--warmup');
const WARMUP = warmupAt === -1 ? 0 : Number(process.argv[warmupAt + 1]);

interface Event {
  readonly key: string;
  readonly v: number;
  readonly ts: number;
}

function input(count: number): Event[] {
  // Zipf(1.0) over 1M keys, as in bench/engine.ts (inverse CDF on a table; a fixed LCG is enough here).
  const n = 1_000_000;
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) cdf[i] = sum += 1 / (i + 1);
  let seed = 42;
  return Array.from({ length: count }, (_, i) => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    const u = (seed / 4294967296) * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    return { key: `user-${lo}`, v: i % 100, ts: Math.floor(i / 100) };
  });
}

type Totals = { count: number; sum: number };
const addInPlace = (e: Event, a: Totals): Totals => {
  a.count++;
  a.sum += e.v;
  return a;
};
const addImmutable = (e: Event, a: Totals): Totals => ({ count: a.count + 1, sum: a.sum + e.v });

async function main(): Promise<void> {
  const events = input(RECORDS);
  const dir = await mkdtemp(join(tmpdir(), 'weir-profile-window-'));
  const job = defineJob({ name: 'profile-window', maxParallelism: 128 }, (b) =>
    b
      .source<Event>('events', generatorSource({ seed: 1, count: events.length, generate: (i) => events[i], timestamps: (e) => e.ts, watermarks: { maxOutOfOrdernessMs: 0 } }))
      .keyBy('by-key', (e) => e.key)
      .window('totals', tumbling(1_000), aggregate({ createAccumulator: () => ({ count: 0, sum: 0 }), add: immutable ? addImmutable : addInPlace, getResult: (a) => a }))
      .sink(
        'out',
        collect
          ? memorySink()
          : callbackSink((batch) => {
              counted += batch.length;
            }),
      ),
  );
  const run = async (name: string) => {
    const running = await runJob(job, {
      tenantId: 'profile',
      jobId: name,
      state: (ctx) => (memory ? createStateBackend({ kind: 'memory' }) : createStateBackend({ kind: 'lsm', path: join(dir, `${name}-${ctx.operatorId}-${ctx.subtask}`) })),
    });
    await running.done;
    return running;
  };
  for (let i = 0; i < WARMUP; i++) await run(`warmup-${i}`);
  const session = profileFile ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  try {
    counted = 0;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const running = await run('profile-window');
    const wall = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    if (session) await writeFile(profileFile!, JSON.stringify((await session.post('Profiler.stop')).profile));
    const cpuMs = (cpu.user + cpu.system) / 1000;
    console.log(`${RECORDS} records: wall ${wall.toFixed(0)} ms (${Math.round((RECORDS / wall) * 1000)} rec/s), cpu ${cpuMs.toFixed(0)} ms (${Math.round((RECORDS / cpuMs) * 1000)} rec/cpu-s), ${collect ? memoryIoOf(running).collected('out').length : counted} results`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
