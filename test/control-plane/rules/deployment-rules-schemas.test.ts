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

  it("is the bundle's when the job declares none", async () => {
    await blob.put(PLAIN_KEY, PLAIN);
    expect(await schemas.of(source(PLAIN_KEY, { 'max-window-ms': '5000' }))).toBe(BUNDLE_SCHEMA);
  });
});
