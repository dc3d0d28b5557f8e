import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';

export interface Started {
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts a Weir process from its TypeScript entry, its output to a log file. */
export function startProcess(entry: string, env: NodeJS.ProcessEnv, logFile: string): Started {
  const log = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(process.execPath, ['-r', '@swc-node/register', entry], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Polls `check` until it returns a value, or fails after `timeoutMs` with `what` in the message. */
export async function waitFor<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}${last ? ` (${(last as Error).message})` : ''}`);
}

export async function getJson(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(5_000) });
  return { status: res.status, body: await res.json().catch(() => null) };
}
