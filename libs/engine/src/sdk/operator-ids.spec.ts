import { describe, expect, it } from 'vitest';
import { aggregate, defineJob, JobDefinitionError, memorySink, memorySource, tumbling } from '../index';

type R = { k: string; v: number; ts: number };
const total = aggregate<string, R, number, number>({ createAccumulator: () => 0, add: (r, a) => a + r.v, getResult: (a) => a, merge: (a, b) => a + b });

/** Operator ids the SDK takes are the ids the control plane and the worker protocol take: nothing refused at deploy. */
describe('operator ids', () => {
  const job = (id: string, splittable = false) => () =>
    defineJob({ name: 'ids', maxParallelism: 8 }, (b) =>
      b
        .source('in', memorySource<R>({ timestamps: (r) => r.ts }))
        .keyBy('by-k', (r) => r.k)
        .window(id, tumbling(10), total, splittable ? { splittable: true } : {})
        .sink('out', memorySink()),
    );

  it('takes 1-64 of letters, digits, "_" and "-"', () => {
    expect(job('totals_per-key')).not.toThrow();
    expect(job('a'.repeat(64))).not.toThrow();
  });

  it('refuses a dot, a 65th character or a leading "-", naming the id and what is allowed', () => {
    for (const bad of ['per.key', 'a'.repeat(65), '-x']) {
      expect(job(bad)).toThrow(JobDefinitionError);
      expect(job(bad)).toThrow(`operator id "${bad}" must be 1-64 of A-Z, a-z, 0-9, "_" or "-"`);
    }
  });

  it('refuses a splittable window whose derived ids would be too long, naming the derived id', () => {
    expect(job('w'.repeat(57), true)).not.toThrow();
    expect(job('w'.repeat(58), true)).toThrow(`operator id "${'w'.repeat(58)}-by-key" must be`);
  });
});
