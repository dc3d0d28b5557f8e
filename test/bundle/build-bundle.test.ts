/**
 * libs/bundle on real files: a job spread over several files that imports a Weir library, built into one CommonJS
 * bundle the worker's loader runs; and the imports a bundle cannot hold, refused with the import chain.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBundle, BundleBuildError } from '@weir/bundle';
import { TestDriver } from '@weir/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBundle } from '../../apps/worker/src/bundles/load-bundle';

describe('buildBundle', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'weir-bundle-test-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function files(sources: Record<string, string>): Promise<string> {
    const sub = await mkdtemp(join(dir, 'job-'));
    for (const [name, source] of Object.entries(sources)) await writeFile(join(sub, name), source);
    return join(sub, 'job.ts');
  }

  it('bundles a multi-file job with a Weir library; the SDK stays the worker’s', async () => {
    const entry = await files({
      'job.ts': `
        import { defineJob, memorySource, memorySink } from '@weir/engine';
        import { zipfTopShare } from '@weir/datagen';
        import { double } from './double';
        export const share = zipfTopShare(10, 1);
        export default defineJob({ name: 'multi-file' }, (job) => {
          job.source('in', memorySource<number>()).map('double', double).sink('out', memorySink());
        });`,
      'double.ts': `import { TWO } from './two';\nexport const double = (n: number): number => n * TWO;`,
      'two.ts': 'export const TWO = 2;',
    });
    const built = await buildBundle(entry);
    const again = await buildBundle(entry);
    expect(again.sha256).toBe(built.sha256);
    expect(built.warnings).toEqual([]);
    const code = built.code.toString('utf8');
    expect(code).toContain('require("@weir/engine")');
    expect(code).toContain('libs/datagen/src/zipf.ts');
    expect(code).not.toContain('libs/engine/src');

    const path = join(dir, `${built.sha256}.js`);
    await writeFile(path, built.code);
    const definition = loadBundle(path);
    expect(definition.name).toBe('multi-file');
    expect(definition.nodes.map((n) => n.id)).toEqual(['in', 'double', 'out']);
    const driver = await TestDriver.start(definition);
    await driver.pushValues('in', [1, 2, 3]);
    expect(driver.output('out')).toEqual([2, 4, 6]);
    await driver.close();
  });

  it('refuses a native addon, naming the chain of imports that reached it', async () => {
    const entry = await files({
      'job.ts': `import { defineJob } from '@weir/engine';\nimport { store } from './store';\nexport default defineJob({ name: 'x' }, () => store);`,
      'store.ts': `export { createStateBackend as store } from '@weir/state';`,
    });
    const err = await buildBundle(entry).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BundleBuildError);
    const problem = (err as BundleBuildError).problems.find((p) => p.includes('rocksdb-native'));
    expect(problem).toMatch(/job\.ts → .*store\.ts → libs\/state\/src\/index\.ts → .* imports "rocksdb-native", a native addon/);
  });

  it('refuses the engine’s internals, by subpath or by relative path', async () => {
    const subpath = await files({ 'job.ts': `export { TestDriver } from '@weir/engine/testing';` });
    await expect(buildBundle(subpath)).rejects.toThrow(/imports "@weir\/engine\/testing": import from "@weir\/engine" only/);
    const relativePath = await files({ 'job.ts': `export * from ${JSON.stringify(join(process.cwd(), 'libs/engine/src/keygroups'))};` });
    await expect(buildBundle(relativePath)).rejects.toThrow(/which is the engine's source \(libs\/engine\/src\/keygroups/);
  });

  it('names an import that does not resolve, with its place', async () => {
    const entry = await files({ 'job.ts': `import { nothing } from './missing';\nexport default nothing;` });
    await expect(buildBundle(entry)).rejects.toThrow(/job\.ts:1:\d+: Could not resolve "\.\/missing"/);
  });
});
