import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './run-cli';

const valid = { ruleId: 'r1', state: 'ACTIVE', groupingKeys: ['payer'], aggregateField: 'amount', function: 'SUM', comparison: '>', limit: 100, windowMs: 60_000 };

describe('weir CLI', () => {
  let dir: string;
  const run = async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(argv, { out: (l) => out.push(l), err: (l) => err.push(l), env: {} });
    return { code, out, err };
  };
  const file = async (name: string, content: unknown) => {
    const path = join(dir, name);
    await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content));
    return path;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'weir-cli-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('lists its commands and refuses unknown ones', async () => {
    const help = await run('--help');
    expect(help.code).toBe(0);
    expect(help.out.join('\n')).toMatch(/generate transactions[\s\S]*rules validate/);
    const unknown = await run('deploy', 'now');
    expect(unknown.code).toBe(2);
    expect(unknown.err[0]).toBe('weir: unknown command "deploy now"');
  });

  it('rules validate: accepts valid rules (one, an array, or { rules }) with exit 0', async () => {
    expect((await run('rules', 'validate', await file('one.json', valid))).out).toEqual([`${join(dir, 'one.json')}: 1 rule valid`]);
    const many = await run('rules', 'validate', await file('many.json', { rules: [valid, { ...valid, ruleId: 'r2' }] }));
    expect(many.code).toBe(0);
    expect(many.out[0]).toMatch(/2 rules valid$/);
  });

  it('rules validate: prints each problem with its path and exits 1', async () => {
    const path = await file('bad.json', [valid, { ...valid, ruleId: 'r2', comparison: '=>', groupingKeys: ['iban'], windowMs: 7_200_000 }]);
    const result = await run('rules', 'validate', path, '--max-window-ms', '3600000');
    expect(result.code).toBe(1);
    expect(result.out).toEqual([
      'rules[1].comparison: unknown operator "=>"; use one of >, >=, <, <=, =, != (did you mean ">="?)',
      'rules[1].groupingKeys[0]: unknown field "iban"; the events have amount, beneficiary, card, merchant, payer, ts, txId',
      "rules[1].windowMs: 7200000 ms is longer than this job's limit of 3600000 ms",
    ]);
    expect(result.err).toEqual([`${path}: 3 problems`]);
  });

  it('rules validate: checks fields against a given event schema', async () => {
    const schema = await file('events.json', { type: 'object', properties: { iban: { type: 'string' }, amount: { type: 'number' } } });
    const rules = await file('iban.json', { ...valid, groupingKeys: ['iban'] });
    expect((await run('rules', 'validate', rules, '--event-schema', schema)).code).toBe(0);
    expect((await run('rules', 'validate', await file('payer.json', valid), '--event-schema', schema)).out[0]).toMatch(/unknown field "payer"/);
  });

  it('rules schema: prints the schema with the job limit written in', async () => {
    const result = await run('rules', 'schema', '--max-window-ms', '60000');
    expect(result.code).toBe(0);
    const schema = JSON.parse(result.out.join('\n')) as { properties: { windowMs: { maximum: number }; aggregateField: { enum: string[] } } };
    expect(schema.properties.windowMs.maximum).toBe(60_000);
    expect(schema.properties.aggregateField.enum).toEqual(['amount', 'ts']);
  });

  it('reports usage errors with exit 2: missing file, bad JSON, bad options', async () => {
    const missing = await run('rules', 'validate', join(dir, 'nope.json'));
    expect(missing.code).toBe(2);
    expect(missing.err[0]).toMatch(/cannot read .*nope\.json: ENOENT/);
    expect((await run('rules', 'validate', await file('broken.json', '{"ruleId":'))).err[0]).toMatch(/is not JSON/);
    expect((await run('rules', 'validate', 'a', '--max-window-ms', 'soon')).err[0]).toMatch(/--max-window-ms must be a positive integer, got "soon"/);
    expect((await run('rules', 'validate', 'a', '--bogus')).code).toBe(2);
    const gen = await run('generate', 'transactions', '--topic', 't', '--rate', '10');
    expect(gen.code).toBe(2);
    expect(gen.err[0]).toMatch(/--rate and --duration are required/);
    const burst = await run('generate', 'transactions', '--topic', 't', '--rate', '10', '--duration', '1', '--burst-key', 'm-1');
    expect(burst.err[0]).toMatch(/--burst-key needs --burst-share, --burst-at and --burst-for/);
  });
});
