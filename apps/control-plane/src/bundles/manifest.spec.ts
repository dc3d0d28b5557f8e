import { describe, expect, it } from 'vitest';
import { InvalidRequestProblem } from '../problems/problem.exception';
import { parseManifestField } from './manifest';

const valid = {
  name: 'fraud-detector',
  version: '1.2.0-rc.1',
  entryPoint: 'job.js',
  operatorIds: ['source', 'score', 'sink'],
  rulesSchema: { type: 'object', properties: { threshold: { type: 'number' } }, required: ['threshold'] },
  defaultParallelism: 2,
  maxParallelism: 128,
  slo: { objectiveMs: 500, percentile: 99, windowMinutes: 60, target: 0.99 },
};

function problemNames(manifest: unknown): string[] {
  try {
    parseManifestField(JSON.stringify(manifest));
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidRequestProblem);
    return (err as InvalidRequestProblem).errors!.map((e) => e.name);
  }
}

describe('bundle manifest', () => {
  it('accepts a full manifest and one without slo', () => {
    expect(problemNames(valid)).toEqual([]);
    const { slo: _slo, ...noSlo } = valid;
    expect(problemNames(noSlo)).toEqual([]);
    expect(problemNames({ ...valid, rulesSchema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' } })).toEqual([]);
  });

  it.each([
    [{ name: 'Fraud_Detector' }, 'manifest.name'],
    [{ name: '-x' }, 'manifest.name'],
    [{ version: '1.2' }, 'manifest.version'],
    [{ entryPoint: '../etc/passwd' }, 'manifest.entryPoint'],
    [{ operatorIds: [] }, 'manifest.operatorIds'],
    [{ operatorIds: ['a', 'a'] }, 'manifest.operatorIds'],
    // The SDK and the worker protocol take no dots and at most 64 characters: refused at upload, not at deploy.
    [{ operatorIds: ['per.key'] }, 'manifest.operatorIds.0'],
    [{ operatorIds: ['a'.repeat(65)] }, 'manifest.operatorIds.0'],
    [{ rulesSchema: { type: 'nonsense' } }, 'manifest.rulesSchema'],
    [{ rulesSchema: { type: 'object', requried: ['x'] } }, 'manifest.rulesSchema'],
    [{ rulesSchema: { $ref: 'https://example.com/elsewhere.json' } }, 'manifest.rulesSchema'],
    [{ rulesSchema: [1] }, 'manifest.rulesSchema'],
    [{ defaultParallelism: 0 }, 'manifest.defaultParallelism'],
    [{ defaultParallelism: 200 }, 'manifest.defaultParallelism'],
    [{ maxParallelism: 40_000 }, 'manifest.maxParallelism'],
    [{ slo: { objectiveMs: 500, percentile: 100, windowMinutes: 60, target: 0.99 } }, 'manifest.slo.percentile'],
    [{ slo: { objectiveMs: 500, percentile: 99, windowMinutes: 60, target: 99 } }, 'manifest.slo.target'],
    [{ extra: true }, 'manifest.extra'],
    [{ slo: { objectiveMs: 500, percentile: 99, windowMinutes: 60, target: 0.9, burn: 2 } }, 'manifest.slo.burn'],
  ])('names the bad field of %j', (patch, name) => {
    expect(problemNames({ ...valid, ...patch })).toContain(name);
  });

  it('names the manifest itself when it is not JSON or not an object', () => {
    expect(() => parseManifestField('{"name":')).toThrow(InvalidRequestProblem);
    expect(problemNames('a string')).toEqual(['manifest']);
  });

  it('names every missing field', () => {
    expect(problemNames({}).sort()).toEqual(
      ['defaultParallelism', 'entryPoint', 'maxParallelism', 'name', 'operatorIds', 'rulesSchema', 'version'].map((f) => `manifest.${f}`),
    );
  });
});
