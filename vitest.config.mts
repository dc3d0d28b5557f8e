import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

const root = fileURLToPath(new URL('.', import.meta.url));

// SWC (not esbuild) compiles the tests so that Nest's decorator metadata is emitted.
const alias = Object.fromEntries(
  ['config', 'engine', 'state', 'kafka', 'metrics', 'db', 'blob', 'protocol', 'bundle', 'datagen', 'rules', 'checkpoint', 'partitioner', 'sandbox'].map((lib) => [
    `@weir/${lib}`,
    resolve(root, `libs/${lib}/src`),
  ]),
);

export default defineConfig({
  plugins: [swc.vite({ module: { type: 'es6' } })],
  resolve: { alias },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['apps/**/*.spec.ts', 'libs/**/*.spec.ts', 'examples/**/*.spec.ts'],
          environment: 'node',
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          environment: 'node',
          // Integration tests share one broker, one S3 server and one database: run files one at a time.
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 120_000,
          globalSetup: ['test/support/global-setup.ts'],
          // Dozens of workers start on 2 cores: no spare job hosts loading beside them (one test turns them on).
          env: { WEIR_WORKER_WARM_JOB_HOSTS: '0' },
        },
      },
    ],
  },
});
