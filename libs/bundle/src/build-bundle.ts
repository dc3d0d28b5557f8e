import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { transform } from '@swc/core';

export class BundleBuildError extends Error {
  override readonly name = 'BundleBuildError';
}

export interface BuiltBundle {
  /** CommonJS source of the job; `@weir/engine` stays an import that the worker provides. */
  readonly code: Buffer;
  readonly sha256: string;
}

/** Imports a bundle may keep: the SDK the worker provides, and Node's own modules. */
const PROVIDED = new Set(['@weir/engine', ...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);

/**
 * Compiles a single-file TypeScript job into a bundle. A job file may import only the SDK and Node's built-in
 * modules: anything else would be missing on the worker, so it is refused here rather than at deploy time.
 */
export async function buildBundle(entryFile: string): Promise<BuiltBundle> {
  const source = await readFile(entryFile, 'utf8');
  const output = await transform(source, {
    filename: entryFile,
    sourceMaps: 'inline',
    module: { type: 'commonjs' },
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
  });
  const imports = [...output.code.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]);
  const foreign = imports.filter((name) => !PROVIDED.has(name));
  if (foreign.length > 0) {
    throw new BundleBuildError(
      `${entryFile} imports ${foreign.join(', ')}: a bundle may import only @weir/engine and Node's built-in modules`,
    );
  }
  const code = Buffer.from(output.code, 'utf8');
  return { code, sha256: createHash('sha256').update(code).digest('hex') };
}
