import { isBuiltin } from 'node:module';
import { extname, relative, sep } from 'node:path';
import type { Plugin } from 'esbuild';
import { isOptionalDependency, nativeAddonReason } from './native-addon';

/** The SDK: the worker provides it, so a job's definition and the runtime share one set of classes. */
export const PROVIDED_SDK = '@weir/engine';

const RESOLVING = Symbol('weir-bundle-resolving');
const UNAVAILABLE = 'weir-unavailable-native-addon';

/**
 * What a bundle may contain: everything the job imports, resolved like the TypeScript compiler does (tsconfig
 * `paths`, so `@weir/rules` or `@weir/datagen` come along), except the SDK and Node's built-in modules, which stay
 * `require()`s served by the worker. Refused, with the chain of imports that led there: the engine's sources
 * reached any other way than `@weir/engine` (a second copy of its classes would not be the worker's), and native
 * addons (compiled code a JavaScript bundle cannot carry) unless a package lists one as optional.
 */
export function bundlePolicy(options: { readonly root: string; readonly engineDir: string }): Plugin {
  return {
    name: 'weir-bundle-policy',
    setup(build) {
      // Resolved file → the file that first imported it, to print how an import was reached.
      const importedBy = new Map<string, string>();
      const show = (file: string) => {
        const rel = relative(options.root, file);
        return rel && !rel.startsWith('..') ? rel : file;
      };
      const chain = (importer: string): string => {
        const files = [importer];
        for (let at = importedBy.get(importer); at !== undefined && files.length < 20; at = importedBy.get(at)) files.unshift(at);
        return files.map(show).join(' → ');
      };

      build.onLoad({ filter: /.*/, namespace: UNAVAILABLE }, (args) => ({
        contents: `throw new Error(${JSON.stringify(`${args.path} is a native addon, left out of the bundle`)});`,
        loader: 'js',
      }));

      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData === RESOLVING || args.kind === 'entry-point') return undefined;
        const spec = args.path;
        if (spec === PROVIDED_SDK) return { path: spec, external: true };
        if (spec.startsWith(`${PROVIDED_SDK}/`)) {
          return refuse(`${chain(args.importer)} imports "${spec}": import from "${PROVIDED_SDK}" only (the worker provides the SDK, not its internals)`);
        }
        if (isBuiltin(spec)) return { path: spec, external: true };
        const resolved = await build.resolve(spec, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: RESOLVING });
        if (resolved.errors.length > 0 || resolved.external) return resolved;
        const file = resolved.path;
        if (file === options.engineDir || file.startsWith(options.engineDir + sep)) {
          return refuse(`${chain(args.importer)} imports "${spec}", which is the engine's source (${show(file)}): import from "${PROVIDED_SDK}" instead`);
        }
        const native = extname(file) === '.node' ? 'it is compiled code (.node)' : nativeAddonReason(file);
        if (native && isOptionalDependency(args.importer, spec)) {
          // An optional accelerator (msgpackr → msgpackr-extract): its importer falls back to JavaScript when the
          // require throws, so the bundle gets a module that throws.
          return { path: spec, namespace: UNAVAILABLE };
        }
        if (native) {
          return refuse(`${chain(args.importer)} imports "${spec}", a native addon (${native}): a bundle can hold only JavaScript; keep it out of the job`);
        }
        if (!importedBy.has(file)) importedBy.set(file, args.importer);
        return { path: file, namespace: resolved.namespace, suffix: resolved.suffix, sideEffects: resolved.sideEffects, pluginData: resolved.pluginData };
      });
    },
  };
}

/** esbuild adds the place of the import statement (file:line:column) to the error. */
function refuse(text: string) {
  return { errors: [{ text }] };
}
