import { describe, expect, it } from 'vitest';
import { memorySink, memorySource } from './connectors';
import { defineJob, instantiateJob, isParameterizedJob } from './define-job';
import { JobParameterError, param } from './parameters';

const job = defineJob(
  {
    name: 'params',
    maxParallelism: 8,
    parameters: {
      topics: { input: param.topic(), output: param.topic(), audit: param.optionalTopic() },
      properties: { limit: param.integer({ default: 10, min: 1 }), mode: param.string({ default: 'fast', oneOf: ['fast', 'exact'] }), strict: param.boolean() },
    },
  },
  (b, params) => {
    // Compile-time: topics are strings (the optional one string | undefined), properties typed by their builder.
    const input: string = params.topics.input;
    const audit: string | undefined = params.topics.audit;
    const limit: number = params.properties.limit;
    const strict: boolean = params.properties.strict;
    b.source(`in-${input.length > 0 ? 'a' : 'b'}`, memorySource<number>())
      .filter('limit', (n) => (strict ? n < limit : n <= limit) && audit !== 'never')
      .sink('out', memorySink());
  },
);

describe('deployment-time parameters', () => {
  it('builds the job from a deployment config, with defaults', () => {
    expect(isParameterizedJob(job)).toBe(true);
    const definition = job.instantiate({ topics: { input: 't.a.in', output: 't.a.out' }, properties: { strict: 'true', 'checkpoint.interval-ms': '500' } });
    expect(definition.name).toBe('params');
    expect(definition.maxParallelism).toBe(8);
    expect(definition.nodes.map((n) => n.id)).toEqual(['in-a', 'limit', 'out']);
  });

  it('names every missing, invalid or unknown parameter', () => {
    let err: unknown;
    try {
      job.instantiate({ topics: { input: 'bad topic!', outptu: 't.a.out' }, properties: { limit: '0', mode: 'slow', strict: 'yes' } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(JobParameterError);
    expect((err as JobParameterError).problems).toEqual([
      { parameter: 'config.topics.input', reason: '"bad topic!" is not a Kafka topic name' },
      { parameter: 'config.topics.output', reason: 'is missing: the job needs this topic' },
      { parameter: 'config.topics.outptu', reason: 'the job has no topic "outptu" (it has input, output, audit)' },
      { parameter: 'config.properties.limit', reason: '0 is outside 1 to ∞' },
      { parameter: 'config.properties.mode', reason: '"slow" is not one of fast, exact' },
      { parameter: 'config.properties.strict', reason: '"yes" is not true or false' },
    ]);
    expect((err as Error).message).toContain('job "params" cannot run with this deployment\'s config: config.topics.input: ');
  });

  it('a property without a default is required; numbers parse strictly', () => {
    expect(() => job.instantiate({ topics: { input: 'i', output: 'o' } })).toThrow('config.properties.strict: is missing: a boolean');
    expect(() => job.instantiate({ topics: { input: 'i', output: 'o' }, properties: { strict: 'false', limit: '2.5' } })).toThrow('"2.5" is not an integer');
    expect(() => job.instantiate({ topics: { input: 'i', output: 'o' }, properties: { strict: 'false', limit: ' ' } })).toThrow('" " is not an integer');
  });

  it('a fixed job ignores the config', () => {
    const fixed = defineJob({ name: 'fixed' }, (b) => b.source('in', memorySource<number>()).sink('out', memorySink()));
    expect(isParameterizedJob(fixed)).toBe(false);
    expect(instantiateJob(fixed, { topics: { anything: 'x' } })).toBe(fixed);
  });
});
