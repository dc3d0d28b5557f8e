/**
 * A deployment's own rules schema: its bundle's job built in the sandbox with the deployment's config (real S3, a
 * real isolate). A parameterized job's schema follows its properties, so the rules API refuses what that deployment's
 * job would refuse.
 */
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { createBlobStore } from '@weir/blob';
import { BundleInspector } from '@weir/sandbox';
import { DeploymentRulesSchemas } from '../../../apps/control-plane/src/bundles/deployment-rules-schemas';
import { validateRuleSet } from '../../../apps/control-plane/src/rules/rule-set-validator';
import { testConfig } from '../support/control-plane';

const run = randomBytes(4).toString('hex');
const config = testConfig();
const blob = createBlobStore(config);
const KEY = `tenants/rs${run}/bundles/windows/1.0.0/x.js`;
const PLAIN_KEY = `tenants/rs${run}/bundles/plain/1.0.0/y.js`;
const JOB = `const { defineJob, param, memorySource, memorySink } = require('@weir/engine');
exports.default = defineJob({ name: 'windows', parameters: { properties: { 'max-window-ms': param.integer({ default: 60000, min: 1 }) } } },
  (job, { properties }) => {
    job.rulesSchema({ type: 'object', required: ['windowMs'], properties: { windowMs: { type: 'integer', maximum: properties['max-window-ms'] } } });
    job.source('in', memorySource()).sink('out', memorySink());
  });`;
const PLAIN = `const { defineJob, memorySource, memorySink } = require('@weir/engine');
exports.default = defineJob({ name: 'plain' }, (job) => job.source('in', memorySource()).sink('out', memorySink()));`;
const BUNDLE_SCHEMA = { type: 'object', required: ['windowMs'], properties: { windowMs: { type: 'integer', maximum: 60000 } } };

describe("a deployment's rules schema", () => {
  const schemas = new DeploymentRulesSchemas(new BundleInspector(), blob, pino({ level: 'silent' }));
  const source = (key: string, properties: Record<string, string>) => ({
    deploymentId: 'd1',
    bundle: { key, sha256: key },
    config: { properties },
    bundleSchema: BUNDLE_SCHEMA,
  });

  afterAll(async () => {
    await blob.delete(KEY);
    await blob.delete(PLAIN_KEY);
    blob.close();
  });

  it("is the job's as the deployment's properties build it, so a rule past the deployment's limit is refused", async () => {
    await blob.put(KEY, JOB);
    const narrow = await schemas.of(source(KEY, { 'max-window-ms': '5000' }));
    expect(narrow).toEqual({ type: 'object', required: ['windowMs'], properties: { windowMs: { type: 'integer', maximum: 5000 } } });
    const checked = validateRuleSet({ rules: [{ ruleId: 'r1', windowMs: 10_000 }] }, narrow);
    expect(checked.ok).toBe(false);
    expect(JSON.stringify(checked)).toContain('windowMs');
    expect(validateRuleSet({ rules: [{ ruleId: 'r1', windowMs: 10_000 }] }, await schemas.of(source(KEY, {}))).ok).toBe(true);
  });

  it('is read once per bundle and config, whatever order the config came in (Postgres reorders jsonb keys)', async () => {
    class CountingInspector extends BundleInspector {
      calls = 0;
      override inspect(...args: Parameters<BundleInspector['inspect']>) {
        this.calls += 1;
        return super.inspect(...args);
      }
    }
    const inspector = new CountingInspector();
    const counted = new DeploymentRulesSchemas(inspector, blob, pino({ level: 'silent' }));
    await blob.put(KEY, JOB);
    counted.warm({ deploymentId: 'd2', bundle: { key: KEY, sha256: KEY }, config: { properties: { 'max-window-ms': '7000', 'bucket-ms': '10' } } });
    const schema = await counted.of(source(KEY, { 'bucket-ms': '10', 'max-window-ms': '7000' }));
    expect((schema.properties as { windowMs: { maximum: number } }).windowMs.maximum).toBe(7000);
    expect(inspector.calls).toBe(1);
  });

  it("is the bundle's when the job declares none", async () => {
    await blob.put(PLAIN_KEY, PLAIN);
    expect(await schemas.of(source(PLAIN_KEY, { 'max-window-ms': '5000' }))).toBe(BUNDLE_SCHEMA);
  });
});
