import { fork } from 'node:child_process';
import { extname, join, resolve } from 'node:path';
import { BundleRefusedError, SandboxUnavailableError, type BundleFacts } from './bundle-facts';
import type { IsolateAnswer, IsolateLimits } from './describe-in-isolate';
import type { InspectRequest } from './inspector-process';
import { sdkSource } from './sdk-source';

export interface InspectOptions extends Partial<IsolateLimits> {
  /** Inspections running at once in this process (each is a process of its own); more wait their turn. */
  readonly concurrency?: number;
}

const DEFAULTS = { memoryLimitMb: 128, timeoutMs: 2_000, concurrency: 2 };
/** A job's rules schema must fit in a manifest, which is at most 256 KiB. */
const MAX_RULES_SCHEMA_CHARS = 256 * 1024;
/** Starting Node with the TypeScript loader, beside the isolate's own limits. */
const STARTUP_ALLOWANCE_MS = 15_000;
/** The repository (libs/sandbox/src → ../../..): all the inspector's process may read. */
const ROOT = resolve(__dirname, '../../..');

/**
 * Reads a bundle's job from its code, in a sandbox: a process of its own (Node's permission model, no environment,
 * nothing it may write, no processes or threads it may start) in which the bundle runs inside a V8 isolate with
 * neither Node nor I/O, within a memory and a time limit. Resolves to the job's facts; a BundleRefusedError says
 * what is wrong with the bundle, a SandboxUnavailableError that the sandbox itself failed.
 */
export class BundleInspector {
  private readonly limits: IsolateLimits;
  private readonly concurrency: number;
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(options: InspectOptions = {}) {
    this.limits = { memoryLimitMb: options.memoryLimitMb ?? DEFAULTS.memoryLimitMb, timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs };
    this.concurrency = options.concurrency ?? DEFAULTS.concurrency;
  }

  /**
   * `config`: build a parameterized job with this deployment config (topics and properties it does not give are
   * sampled) rather than with its defaults: its rules schema, say, is then the deployment's.
   */
  async inspect(code: Buffer, config?: { readonly topics?: Readonly<Record<string, string>>; readonly properties?: Readonly<Record<string, string>> }): Promise<BundleFacts> {
    if (this.running >= this.concurrency) await new Promise<void>((go) => this.waiting.push(go));
    this.running += 1;
    try {
      const sdk = await sdkSource().catch((err: unknown) => {
        throw new SandboxUnavailableError(`the SDK for the sandbox could not be built: ${(err as Error).message}`);
      });
      return factsFrom(await this.runInspector({ sdkSource: sdk, bundleSource: code.toString('utf8'), limits: this.limits, config: config ?? null }));
    } finally {
      this.running -= 1;
      this.waiting.shift()?.();
    }
  }

  private runInspector(request: InspectRequest): Promise<IsolateAnswer | { failed: string }> {
    const entry = join(__dirname, `inspector-process${extname(__filename)}`);
    const loader = extname(__filename) === '.ts' ? ['-r', '@swc-node/register'] : [];
    const child = fork(entry, [], {
      execArgv: [
        // isolated-vm crashes Node 20 when isolates meet Node's startup snapshot.
        '--no-node-snapshot',
        '--experimental-permission',
        `--allow-fs-read=${ROOT}`,
        '--allow-addons',
        '--disable-warning=ExperimentalWarning',
        `--max-old-space-size=${this.limits.memoryLimitMb * 2 + 128}`,
        ...loader,
      ],
      // Nothing of the control plane's; the TypeScript loader (development, tests) keeps its cache in memory, as the
      // process may write no file.
      env: loader.length > 0 ? { SWC_NODE_CACHE: 'false' } : {},
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      serialization: 'advanced',
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      if (stderr.length < 4_096) stderr += chunk.toString('utf8');
    });
    return new Promise((resolveAnswer, reject) => {
      let answered = false;
      const deadline = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new BundleRefusedError(`checking the bundle took longer than ${(STARTUP_ALLOWANCE_MS + 3 * this.limits.timeoutMs) / 1000} s`));
      }, STARTUP_ALLOWANCE_MS + 3 * this.limits.timeoutMs);
      child.once('message', (answer: IsolateAnswer | { failed: string }) => {
        answered = true;
        clearTimeout(deadline);
        resolveAnswer(answer);
      });
      child.once('error', (err) => {
        clearTimeout(deadline);
        reject(new SandboxUnavailableError(`the bundle inspector could not start: ${err.message}`));
      });
      child.once('exit', (code, signal) => {
        clearTimeout(deadline);
        if (!answered) reject(new SandboxUnavailableError(`the bundle inspector exited (${signal ?? `code ${code}`}) without an answer${stderr ? `: ${stderr.trim().split('\n')[0]}` : ''}`));
      });
      child.send(request);
    });
  }
}

/** The isolate's answer, trusted for nothing: its shape is checked here. */
function factsFrom(answer: IsolateAnswer | { failed: string }): BundleFacts {
  if ('failed' in answer) throw new SandboxUnavailableError(`the bundle inspector failed: ${answer.failed}`);
  if ('refused' in answer) throw new BundleRefusedError(String(answer.refused).slice(0, 2_000));
  const facts = answer.facts as Partial<BundleFacts> | null;
  const ids = facts?.operatorIds;
  if (
    !facts ||
    typeof facts.jobName !== 'string' ||
    !Number.isSafeInteger(facts.maxParallelism) ||
    !Array.isArray(ids) ||
    ids.length > 10_000 ||
    !ids.every((id) => typeof id === 'string' && id.length <= 256) ||
    typeof facts.parameterized !== 'boolean' ||
    !(facts.rulesSchema === null || (typeof facts.rulesSchema === 'object' && !Array.isArray(facts.rulesSchema)))
  ) {
    throw new BundleRefusedError("the bundle's job could not be read (its graph is not what defineJob builds)");
  }
  if (facts.rulesSchema && JSON.stringify(facts.rulesSchema).length > MAX_RULES_SCHEMA_CHARS) {
    throw new BundleRefusedError(`the job's rules schema is larger than ${MAX_RULES_SCHEMA_CHARS / 1024} KiB (a manifest holds at most 256 KiB)`);
  }
  return {
    jobName: facts.jobName.slice(0, 256),
    maxParallelism: facts.maxParallelism!,
    operatorIds: [...ids],
    parameterized: facts.parameterized,
    rulesSchema: facts.rulesSchema ?? null,
  };
}
