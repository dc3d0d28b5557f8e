import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { extname, join, resolve } from 'node:path';
import { jobHostEnv } from './job-host-env';
import { DEFAULT_JOB_HOST_LIMITS, type JobHostLimits } from './job-host-limits';

/** A forked job host and the folder that is all it may write: its job's bundle and state go there. */
export interface ForkedJobHost {
  readonly child: ChildProcess;
  readonly dir: string;
}

export interface ForkOptions {
  readonly limits?: JobHostLimits;
  /** Where each job host's own folder is made (default: the system's temporary folder). */
  readonly hostsRoot?: string;
  /**
   * false: no permission model. Only for `npm run bench -- isolation`, whose baseline it is (what the sandbox costs
   * is measured against it); nothing in the worker sets it.
   */
  readonly permissions?: false;
}

/** The repository (apps/worker/src/jobs → ../../../..): the code a job host loads lives under it. */
const ROOT = resolve(__dirname, '../../../..');
/**
 * What a job host may read besides its own folder: its code (the sources and node_modules, or the build), the
 * configuration its TypeScript loader reads, and one file a dependency probes for (require-addon asks whether
 * /etc/alpine-release exists; Node 20 throws rather than answering no for a path it may not read).
 */
const CODE_PATHS = ['apps', 'libs', 'node_modules', 'dist', 'package.json', 'tsconfig.json'].map((p) => join(ROOT, p)).concat('/etc/alpine-release');

/**
 * Node's permission model for a job host: tenant code runs in it. It may read only its code and its own folder and
 * write only its own folder (not the worker's bundle cache, not another job's state, not the repository), and may not
 * start processes or worker threads (spawn, exec, fork, process.binding and new Worker throw ERR_ACCESS_DENIED) —
 * the trusted part needs none of it. Addons stay allowed: the state store (classic-level) is one, and its own I/O
 * (inside its folder) is not checked by Node.
 */
function permissions(dir: string): string[] {
  return [
    '--experimental-permission',
    ...[...CODE_PATHS, dir].map((path) => `--allow-fs-read=${path}`),
    `--allow-fs-write=${dir}`,
    '--allow-addons',
    '--disable-warning=ExperimentalWarning',
    // "--allow-addons must be used with extreme caution": the addons are the state store's, not the tenant's.
    '--disable-warning=SecurityWarning',
  ];
}

/**
 * Forks one job host child process in a folder of its own: the one place its entry, loader, permissions and stdio are
 * chosen. The child loads the engine, kafkajs, the state store and the S3 client as it starts, then waits for its
 * start message on IPC. It gets only the environment a job host needs (job-host-env.ts): tenant code runs in it.
 */
export function forkJobHost(options: ForkOptions = {}): ForkedJobHost {
  const limits = options.limits ?? DEFAULT_JOB_HOST_LIMITS;
  const dir = join(options.hostsRoot ?? join(tmpdir(), 'weir-job-hosts'), randomUUID());
  mkdirSync(dir, { recursive: true });
  // From TypeScript sources (development, demo, tests) the child needs the same loader as this process, told where
  // its tsconfig is (it may not list the repository's folders) and to keep its cache in memory (it may write no
  // shared folder: a cache another job host loads code from would be a way into it).
  const fromSources = extname(__filename) === '.ts';
  // Resolved here: the child starts in its own folder, where a bare module name would not resolve.
  const loader = fromSources ? ['-r', require.resolve('@swc-node/register')] : [];
  const loaderEnv = fromSources ? { SWC_NODE_PROJECT: join(ROOT, 'apps/worker/tsconfig.job-host.json'), SWC_NODE_CACHE: 'false' } : {};
  const child = fork(join(__dirname, `job-host${extname(__filename)}`), [], {
    execArgv: [...(options.permissions === false ? [] : permissions(dir)), `--max-old-space-size=${limits.maxHeapMb}`, ...loader],
    env: { ...jobHostEnv(process.env), ...loaderEnv },
    // stderr through this process (passed on as it comes) so that JobProcess can read why a job host died.
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
    serialization: 'advanced',
    cwd: dir,
  });
  child.stderr!.on('data', (chunk: Buffer) => process.stderr.write(chunk));
  return { child, dir };
}

/**
 * Removes a job host's folder once it has exited: its state lives on in checkpoints on S3. In the background (a
 * job's state can be gigabytes: removing it must not hold the worker's event loop); what a failure or a crash
 * leaves, the worker's next start under the same id removes (WorkerApp).
 */
export function removeJobHostDir(host: ForkedJobHost): void {
  void rm(host.dir, { recursive: true, force: true }).catch(() => undefined);
}

export interface WarmJobHostsOptions {
  /** Job hosts kept forked and loaded, waiting for a job (0: every job forks its own when it starts). */
  readonly spares: number;
  /**
   * How long after a spare is taken before another is forked in its place. Loading one costs about a second of CPU:
   * forked at once, it would compete with the job that just started (a rescale's joiner moving key groups in).
   */
  readonly refillDelayMs?: number;
  /** How a spare is forked (the worker's limits and hosts folder). */
  readonly forkOptions?: ForkOptions;
  /** What forks one (forkJobHost with `forkOptions`; unit tests give a stand-in). */
  readonly fork?: () => ForkedJobHost;
}

const DEFAULT_REFILL_DELAY_MS = 10_000;

/**
 * Job host processes forked ahead of need, their modules already loaded, so that a job starting here — a rescale's
 * joiner, a run restored after a lost process — skips the second or two a cold Node process spends loading before
 * it can read its first record, and the CPU that loading takes is spent when nothing is waiting for it. A spare has
 * been handed nothing: no tenant, no job, no credentials beyond what any job host of this worker gets.
 */
export class WarmJobHosts {
  private readonly spares: ForkedJobHost[] = [];
  private readonly forkOne: () => ForkedJobHost;
  private refill: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: WarmJobHostsOptions) {
    this.forkOne = options.fork ?? (() => forkJobHost(options.forkOptions));
    this.fill();
  }

  /** How many spares wait now (forked and not exited). */
  get ready(): number {
    return this.spares.filter((spare) => alive(spare.child)).length;
  }

  /** A spare if one waits (and another is forked in its place later), else a fresh fork. */
  take(): ForkedJobHost {
    let spare: ForkedJobHost | undefined;
    while (!spare && this.spares.length > 0) {
      const next = this.spares.shift()!;
      if (alive(next.child)) spare = next;
      else removeJobHostDir(next);
    }
    this.scheduleRefill();
    return spare ?? this.forkOne();
  }

  /** Kills the spares; take() forks fresh ones from here on. */
  close(): void {
    this.closed = true;
    clearTimeout(this.refill);
    for (const spare of this.spares.splice(0)) {
      if (alive(spare.child)) spare.child.kill('SIGKILL');
      removeJobHostDir(spare);
    }
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
    for (let i = this.spares.length - 1; i >= 0; i--) if (!alive(this.spares[i].child)) this.spares.splice(i, 1);
    while (this.spares.length < this.options.spares) {
      const spare = this.forkOne();
      // A spare that dies waiting (killed, out of memory) is replaced at the next refill, never handed out.
      spare.child.once('exit', () => {
        const at = this.spares.indexOf(spare);
        if (at < 0) return; // taken: its job's end is its JobProcess's business
        this.spares.splice(at, 1);
        removeJobHostDir(spare);
        this.scheduleRefill();
      });
      this.spares.push(spare);
    }
  }
}

const alive = (child: ChildProcess) => child.exitCode === null && child.signalCode === null && child.connected;
