import { fork, type ChildProcess } from 'node:child_process';
import { extname, join } from 'node:path';
import { jobHostEnv } from './job-host-env';
import { DEFAULT_JOB_HOST_LIMITS, type JobHostLimits } from './job-host-limits';

/**
 * Node's permission model for a job host: tenant code runs in it, and it may not start processes or worker threads
 * (spawn, exec, fork, process.binding and new Worker throw ERR_ACCESS_DENIED) — the trusted part needs neither.
 * Files stay open to it (`*`): a spare is forked before its job's bundle and state folder are known, and Node 20
 * fixes these paths at start. Addons stay allowed: the state store (classic-level) is one.
 */
const JOB_HOST_PERMISSIONS = [
  '--experimental-permission',
  '--allow-fs-read=*',
  '--allow-fs-write=*',
  '--allow-addons',
  '--disable-warning=ExperimentalWarning',
];

/**
 * Forks one job host child process: the one place its entry, loader and stdio are chosen. The child loads the
 * engine, kafkajs, the state store and the S3 client as it starts (about a second of CPU here), then waits for its
 * start message on IPC. It gets only the environment a job host needs (job-host-env.ts): tenant code runs in it.
 */
export function forkJobHost(limits: JobHostLimits = DEFAULT_JOB_HOST_LIMITS): ChildProcess {
  // From TypeScript sources (development, demo, tests) the child needs the same loader as this process.
  const entry = join(__dirname, `job-host${extname(__filename)}`);
  const loader = extname(__filename) === '.ts' ? ['-r', '@swc-node/register'] : [];
  const child = fork(entry, [], {
    execArgv: [...JOB_HOST_PERMISSIONS, `--max-old-space-size=${limits.maxHeapMb}`, ...loader],
    env: jobHostEnv(process.env),
    // stderr through this process (passed on as it comes) so that JobProcess can read why a job host died.
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
    serialization: 'advanced',
  });
  child.stderr!.on('data', (chunk: Buffer) => process.stderr.write(chunk));
  return child;
}

export interface WarmJobHostsOptions {
  /** Job hosts kept forked and loaded, waiting for a job (0: every job forks its own when it starts). */
  readonly spares: number;
  /**
   * How long after a spare is taken before another is forked in its place. Loading one costs about a second of CPU:
   * forked at once, it would compete with the job that just started (a rescale's joiner moving key groups in).
   */
  readonly refillDelayMs?: number;
  /** The worker's job host limits, which a spare is forked with. */
  readonly limits?: JobHostLimits;
  /** What forks one (forkJobHost with `limits`; unit tests give a stand-in). */
  readonly fork?: () => ChildProcess;
}

const DEFAULT_REFILL_DELAY_MS = 10_000;

/**
 * Job host processes forked ahead of need, their modules already loaded, so that a job starting here — a rescale's
 * joiner, a run restored after a lost process — skips the second or two a cold Node process spends loading before
 * it can read its first record, and the CPU that loading takes is spent when nothing is waiting for it. A spare has
 * been handed nothing: no tenant, no job, no credentials beyond what any job host of this worker gets.
 */
export class WarmJobHosts {
  private readonly spares: ChildProcess[] = [];
  private readonly forkOne: () => ChildProcess;
  private refill: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: WarmJobHostsOptions) {
    this.forkOne = options.fork ?? (() => forkJobHost(options.limits));
    this.fill();
  }

  /** How many spares wait now (forked and not exited). */
  get ready(): number {
    return this.spares.filter(alive).length;
  }

  /** A spare if one waits (and another is forked in its place later), else a fresh fork. */
  take(): ChildProcess {
    let spare: ChildProcess | undefined;
    while (!spare && this.spares.length > 0) {
      const next = this.spares.shift()!;
      if (alive(next)) spare = next;
    }
    this.scheduleRefill();
    return spare ?? this.forkOne();
  }

  /** Kills the spares; take() forks fresh ones from here on. */
  close(): void {
    this.closed = true;
    clearTimeout(this.refill);
    for (const spare of this.spares.splice(0)) if (alive(spare)) spare.kill('SIGKILL');
  }

  private scheduleRefill(): void {
    if (this.closed || this.options.spares === 0 || this.refill) return;
    this.refill = setTimeout(() => {
      this.refill = undefined;
      this.fill();
    }, this.options.refillDelayMs ?? DEFAULT_REFILL_DELAY_MS);
    this.refill.unref();
  }

  private fill(): void {
    if (this.closed) return;
    for (let i = this.spares.length - 1; i >= 0; i--) if (!alive(this.spares[i])) this.spares.splice(i, 1);
    while (this.spares.length < this.options.spares) {
      const spare = this.forkOne();
      // A spare that dies waiting (killed, out of memory) is replaced at the next refill, never handed out.
      spare.once('exit', () => {
        const at = this.spares.indexOf(spare);
        if (at < 0) return; // taken: its job's end is its JobProcess's business
        this.spares.splice(at, 1);
        this.scheduleRefill();
      });
      this.spares.push(spare);
    }
  }
}

const alive = (child: ChildProcess) => child.exitCode === null && child.signalCode === null && child.connected;
