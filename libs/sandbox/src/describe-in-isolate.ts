import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ivm from 'isolated-vm';

export interface IsolateLimits {
  /** The isolate's heap, in MiB: the bundle's source, the SDK and the job's graph must fit. */
  readonly memoryLimitMb: number;
  /** Each step (the SDK, the bundle's top level, building the job) may run this long. */
  readonly timeoutMs: number;
}

export type IsolateAnswer = { readonly facts: unknown } | { readonly refused: string };

const IN_ISOLATE = readFileSync(join(__dirname, 'in-isolate.js'), 'utf8');

/**
 * Loads a bundle inside a fresh V8 isolate (isolated-vm) and reads its job: the isolate has no Node, no require
 * beyond the SDK, no file system, network or environment, and is disposed after. A bundle that loops or allocates
 * without end is stopped by the limits and refused; its syntax errors are refused with their place.
 */
export function describeInIsolate(sdkSource: string, bundleSource: string, limits: IsolateLimits, config: unknown = null): IsolateAnswer {
  const isolate = new ivm.Isolate({ memoryLimit: limits.memoryLimitMb });
  const timeout = limits.timeoutMs;
  try {
    const context = isolate.createContextSync();
    context.evalSync(sdkSource, { timeout, filename: 'weir-sdk.js' });
    context.evalSync(IN_ISOLATE, { timeout, filename: 'weir-describe.js' });
    let script: ivm.Script;
    try {
      // The module wrapper of CommonJS, on the bundle's first line so that its line numbers stay its own.
      script = isolate.compileScriptSync(`globalThis.__weirBundle = function (exports, require, module, __filename, __dirname) {${bundleSource}\n};`, { filename: 'job.js' });
    } catch (err) {
      return { refused: `the bundle is not valid JavaScript: ${(err as Error).message}` };
    }
    script.runSync(context, { timeout });
    const describe = context.global.getSync('__weirDescribe', { reference: true }) as ivm.Reference<(config: string) => string>;
    const answer: unknown = describe.applySync(undefined, [JSON.stringify(config)], { timeout, result: { copy: true } });
    return typeof answer === 'string' ? (JSON.parse(answer) as IsolateAnswer) : { refused: 'the bundle replaced what reads its job' };
  } catch (err) {
    const text = (err as Error).message ?? String(err);
    if (isolate.isDisposed || /memory limit/i.test(text)) return { refused: `the bundle used more than ${limits.memoryLimitMb} MiB as it loaded` };
    if (/timed out/i.test(text)) return { refused: `the bundle ran for more than ${limits.timeoutMs} ms as it loaded (an endless loop?)` };
    return { refused: `the bundle failed to load: ${text}` };
  } finally {
    if (!isolate.isDisposed) isolate.dispose();
  }
}
