import { existsSync, readFileSync } from 'node:fs';
import { join, sep } from 'node:path';

/** Packages whose only job is to load compiled code: depending on one marks a package as a native addon. */
const ADDON_LOADERS = ['node-gyp-build', 'node-gyp-build-optional-packages', 'require-addon', 'bindings', 'prebuild-install', '@mapbox/node-pre-gyp', 'node-pre-gyp'];

interface PackageJson {
  readonly name?: string;
  readonly gypfile?: boolean;
  readonly addon?: boolean;
  readonly binary?: unknown;
  readonly dependencies?: Record<string, string>;
  readonly optionalDependencies?: Record<string, string>;
}

const verdicts = new Map<string, string | null>();

/**
 * Why the npm package that `file` belongs to is a native addon, or null when it is plain JavaScript (or `file` is
 * not in node_modules). A native addon loads a compiled `.node` file at run time, which a bundle cannot carry.
 */
export function nativeAddonReason(file: string): string | null {
  const root = packageRoot(file);
  if (!root) return null;
  let verdict = verdicts.get(root);
  if (verdict === undefined) {
    verdict = inspect(root);
    verdicts.set(root, verdict);
  }
  return verdict;
}

/** Whether the installed package that `importer` belongs to lists `spec` among its optionalDependencies. */
export function isOptionalDependency(importer: string, spec: string): boolean {
  const root = packageRoot(importer);
  const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
  return root !== null && readPackage(root)?.optionalDependencies?.[name] !== undefined;
}

function readPackage(root: string): PackageJson | null {
  try {
    return JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as PackageJson;
  } catch {
    return null;
  }
}

function inspect(root: string): string | null {
  const pkg = readPackage(root);
  if (!pkg) return null;
  if (pkg.gypfile || existsSync(join(root, 'binding.gyp'))) return 'it is built with node-gyp (binding.gyp)';
  if (pkg.addon) return 'its package.json declares it an addon';
  if (pkg.binary) return 'it downloads a prebuilt binary (package.json "binary")';
  const loader = ADDON_LOADERS.find((name) => pkg.dependencies?.[name] !== undefined);
  if (loader) return `it loads compiled code through ${loader}`;
  return null;
}

/** `…/node_modules/name` or `…/node_modules/@scope/name` of a file inside an installed package. */
function packageRoot(file: string): string | null {
  const marker = `${sep}node_modules${sep}`;
  const at = file.lastIndexOf(marker);
  if (at < 0) return null;
  const parts = file.slice(at + marker.length).split(sep);
  const depth = parts[0].startsWith('@') ? 2 : 1;
  if (parts.length <= depth) return null;
  return file.slice(0, at + marker.length) + parts.slice(0, depth).join(sep);
}
