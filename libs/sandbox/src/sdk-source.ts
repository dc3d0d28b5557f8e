import { existsSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { build } from 'esbuild';

/** The SDK's entry beside this library's sources (libs/sandbox/src → libs/engine/src/sdk), as TypeScript or built. */
const SDK_ENTRY = resolve(__dirname, '../../engine/src/sdk', `index${extname(__filename)}`);
const BUFFER_SHIM = resolve(__dirname, `isolate-buffer${extname(__filename)}`);

let built: Promise<string> | undefined;

/**
 * The SDK (defineJob, the stream builder, connectors, windows, state descriptors: libs/engine/src/sdk) as one script
 * for an isolate, setting `globalThis.__weirSdk`, and `globalThis.Buffer` (the `buffer` package: the SDK and many
 * bundles name it as they load). It imports nothing else of Node's, so it builds for a neutral platform; built once
 * per process (tens of milliseconds) and kept.
 */
export function sdkSource(): Promise<string> {
  built ??= buildSdk().catch((err: unknown) => {
    built = undefined;
    throw err;
  });
  return built;
}

async function buildSdk(): Promise<string> {
  if (!existsSync(SDK_ENTRY)) throw new Error(`the SDK's sources are not at ${SDK_ENTRY}`);
  const output = await build({
    stdin: {
      contents: `import * as sdk from ${JSON.stringify(SDK_ENTRY)};\nimport { Buffer } from 'buffer';\nglobalThis.__weirSdk = sdk;\nglobalThis.Buffer = Buffer;\n`,
      resolveDir: __dirname,
      loader: 'js',
    },
    inject: [BUFFER_SHIM],
    bundle: true,
    platform: 'neutral',
    mainFields: ['browser', 'module', 'main'],
    format: 'iife',
    target: 'es2022',
    write: false,
    keepNames: true,
    legalComments: 'none',
    logLevel: 'silent',
  });
  return output.outputFiles[0].text;
}
