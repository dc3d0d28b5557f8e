import type { ParseArgsConfig } from 'node:util';

/** Where a command writes; injected so commands run the same in tests. */
export interface CliIo {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  readonly env: NodeJS.ProcessEnv;
}

/** One CLI command (`weir <path...> [options]`): one file per command under commands/. */
export interface Command {
  /** The words that select it, e.g. ['rules', 'validate']. */
  readonly path: readonly string[];
  readonly summary: string;
  /** Usage line after the command words, e.g. 'FILE [--max-window-ms N]'. */
  readonly usage: string;
  readonly options: NonNullable<ParseArgsConfig['options']>;
  /** Returns the exit code. */
  run(args: { readonly values: Record<string, string | boolean | undefined>; readonly positionals: readonly string[] }, io: CliIo): Promise<number>;
}

export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** A mistake in how the command was called: printed with the usage, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export function requiredString(values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v.length === 0) throw new UsageError(`--${name} is required`);
  return v;
}

export function optionalNumber(values: Record<string, unknown>, name: string, check: (n: number) => boolean, what: string): number | undefined {
  const v = values[name];
  if (v === undefined) return undefined;
  const n = Number(v);
  if (typeof v !== 'string' || v.trim() === '' || !Number.isFinite(n) || !check(n)) throw new UsageError(`--${name} must be ${what}, got "${String(v)}"`);
  return n;
}
