import { createHash } from 'node:crypto';
import { builtinModules } from 'node:module';
import { dirname, relative, resolve } from 'node:path';
import { build, type BuildFailure, type Message } from 'esbuild';
import { bundlePolicy, PROVIDED_SDK } from './bundle-policy';

export class BundleBuildError extends Error {
  override readonly name = 'BundleBuildError';

  constructor(
    message: string,
    /** Each problem on its own, `file:line:column: text` where esbuild knows the place. */
    readonly problems: readonly string[] = [],
  ) {
    super(message);
  }
}

export interface BuiltBundle {
  /** One CommonJS file: the job and everything it imports, except `@weir/engine` and Node's built-in modules. */
  readonly code: Buffer;
  readonly sha256: string;
  /** What esbuild warned about (e.g. a require() of a computed name, left to run time); empty when nothing. */
  readonly warnings: readonly string[];
}

export interface BuildBundleOptions {
  /** The tsconfig whose `paths` resolve imports; default Weir's own, so `@weir/*` libraries resolve from anywhere. */
  readonly tsconfig?: string;
}

/** The repository root (libs/bundle/src → ../../..): where Weir's tsconfig and the engine's sources are. */
const ROOT = resolve(__dirname, '../../..');
const ENGINE_DIR = resolve(ROOT, 'libs/engine');
const PROVIDED = new Set([PROVIDED_SDK, ...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);

/**
 * Builds a job bundle: the entry file (TypeScript or JavaScript) and every module it imports, in one CommonJS file
 * for the worker's job host. The same sources give the same bytes (paths in the output are relative to the
 * repository), so the sha256 identifies the build.
 */
export async function buildBundle(entryFile: string, options: BuildBundleOptions = {}): Promise<BuiltBundle> {
  const entry = resolve(entryFile);
  let output;
  try {
    output = await build({
      entryPoints: [entry],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      write: false,
      outfile: resolve(dirname(entry), 'bundle.js'),
      absWorkingDir: ROOT,
      tsconfig: options.tsconfig ? resolve(options.tsconfig) : resolve(ROOT, 'tsconfig.json'),
      sourcemap: 'inline',
      sourcesContent: false,
      keepNames: true,
      legalComments: 'none',
      logLevel: 'silent',
      metafile: true,
      plugins: [bundlePolicy({ root: ROOT, engineDir: ENGINE_DIR })],
    });
  } catch (err) {
    const errors = (err as Partial<BuildFailure>).errors;
    if (!errors) throw err;
    const problems = errors.map(describe);
    throw new BundleBuildError(`${shown(entry)} cannot be bundled:\n  ${problems.join('\n  ')}`, problems);
  }
  const code = Buffer.from(output.outputFiles[0].contents);
  // A last guard: every import left outside the bundle must be something the worker serves.
  const externals = Object.values(output.metafile.outputs).flatMap((o) => o.imports.filter((i) => i.external).map((i) => i.path));
  const foreign = externals.filter((name) => !PROVIDED.has(name));
  if (foreign.length > 0) {
    const problems = [...new Set(foreign)].map((name) => `the bundle still imports "${name}", which the worker does not provide`);
    throw new BundleBuildError(`${shown(entry)} cannot be bundled:\n  ${problems.join('\n  ')}`, problems);
  }
  return { code, sha256: createHash('sha256').update(code).digest('hex'), warnings: output.warnings.map(describe) };
}

function shown(file: string): string {
  const rel = relative(ROOT, file);
  return rel && !rel.startsWith('..') ? rel : file;
}

function describe(message: Message): string {
  const at = message.location;
  return at ? `${at.file}:${at.line}:${at.column}: ${message.text}` : message.text;
}
