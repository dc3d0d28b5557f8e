import { describe, expect, it } from 'vitest';
import { BundleInspector } from './inspect-bundle';
import { BundleRefusedError } from './bundle-facts';

const inspector = new BundleInspector({ timeoutMs: 1_000, memoryLimitMb: 64 });
const inspect = (code: string) => inspector.inspect(Buffer.from(code));

const JOB = `"use strict";
const { defineJob, memorySource, memorySink } = require('@weir/engine');
module.exports = { default: defineJob({ name: 'counts', maxParallelism: 32 }, (job) =>
  job.source('source', memorySource()).map('score', (r) => r).sink('sink', memorySink())) };`;

/** A bundle that does `body` as it loads, then exports a valid job. */
const loading = (body: string) => `${body}\n${JOB}`;

describe('BundleInspector', () => {
  it("reads a job's name, max parallelism and operator ids from its code", async () => {
    expect(await inspect(JOB)).toEqual({ jobName: 'counts', maxParallelism: 32, operatorIds: ['source', 'score', 'sink'], parameterized: false, rulesSchema: null });
  });

  it('builds a parameterized job with sample values, leaving derived nodes out of the operator ids', async () => {
    const code = `const { defineJob, param, kafkaSource, kafkaSink, json } = require('@weir/engine');
      exports.default = defineJob({ name: 'p', maxParallelism: 16, parameters: { topics: { input: param.topic(), out: param.topic() }, properties: { limit: param.integer({ min: 1 }) } } },
        (job, { topics }) => { const s = job.source('in', kafkaSource({ topic: topics.input, serde: json() })); s.broadcast(); s.sink('out', kafkaSink({ topic: topics.out, serde: json() })); });`;
    expect(await inspect(code)).toEqual({ jobName: 'p', maxParallelism: 16, operatorIds: ['in', 'out'], parameterized: true, rulesSchema: null });
  });

  it("reads the rules schema a job declares, built with its properties' defaults", async () => {
    const code = `const { defineJob, param, memorySource, memorySink } = require('@weir/engine');
      exports.default = defineJob({ name: 'r', parameters: { properties: { 'max-window-ms': param.integer({ default: 5000, min: 1 }) } } },
        (job, { properties }) => { job.rulesSchema({ type: 'object', properties: { windowMs: { type: 'integer', maximum: properties['max-window-ms'] } } }); job.source('in', memorySource()).sink('out', memorySink()); });`;
    expect((await inspect(code)).rulesSchema).toEqual({ type: 'object', properties: { windowMs: { type: 'integer', maximum: 5000 } } });
  });

  it('lets a bundle name Node modules as it loads, and refuses one that calls them, naming the call', async () => {
    expect((await inspect(loading("const { createHash } = require('node:crypto');"))).jobName).toBe('counts');
    await expect(inspect(loading("require('node:child_process').execSync('id');"))).rejects.toThrow('require("node:child_process").execSync is not available');
  });

  it('gives the bundle no environment, no file system and no network', async () => {
    expect((await inspect(loading("if (Object.keys(process.env).length > 0) throw new Error('env');"))).jobName).toBe('counts');
    await expect(inspect(loading("require('node:fs').readFileSync('/etc/passwd');"))).rejects.toThrow('is not available');
    await expect(inspect(loading("fetch('http://127.0.0.1:5432');"))).rejects.toThrow('fetch is not available');
  });

  it.each([
    ['an endless loop', 'for (;;) {}', 'ran for more than 1000 ms'],
    ['allocation without end', 'const all = []; for (;;) all.push(new Array(1e6).fill(7));', 'used more than 64 MiB'],
    ['a syntax error', 'const = 1;', 'is not valid JavaScript'],
    ['an exception', "throw new Error('boom');", 'the bundle failed to load: Error: boom'],
  ])('refuses %s with the reason', async (_what, body, reason) => {
    const refusal = inspect(loading(body));
    await expect(refusal).rejects.toBeInstanceOf(BundleRefusedError);
    await expect(refusal).rejects.toThrow(reason);
  });

  it('refuses a bundle that exports no job', async () => {
    await expect(inspect('module.exports = 42;')).rejects.toThrow('must export a job definition');
  });
});
