import { afterEach, describe, expect, it } from 'vitest';
import { TestDriver, type CheckpointSnapshot } from '@weir/engine';
import type { Rule } from '@weir/rules';
import { buildInMemoryFraudJob, OPERATOR_IDS } from './job';
import type { Alert, RuleAck } from './messages';
import type { Transaction } from './transaction';

const job = buildInMemoryFraudJob({ maxWindowMs: 60_000, bucketMs: 1_000, maxParallelism: 16 });

let driver: TestDriver | undefined;
afterEach(async () => {
  await driver?.close();
  driver = undefined;
});

async function start(restore?: CheckpointSnapshot): Promise<TestDriver> {
  driver = await TestDriver.start(job, { parallelism: { default: 2, transactions: 1, rules: 1 }, restore });
  return driver;
}

const rule = (r: Partial<Rule> & Pick<Rule, 'ruleId'>): Rule => ({
  state: 'ACTIVE',
  groupingKeys: ['payer'],
  aggregateField: 'amount',
  function: 'SUM',
  comparison: '>',
  limit: 100,
  windowMs: 10_000,
  ...r,
});

let n = 0;
const tx = (ts: number, amount: number, over: Partial<Transaction> = {}): Transaction => ({
  txId: `tx-${String(++n).padStart(4, '0')}`,
  ts,
  payer: 'p1',
  beneficiary: 'b1',
  card: 'c1',
  merchant: 'm1',
  amount,
  ...over,
});

async function pushRules(d: TestDriver, ...rules: unknown[]) {
  await d.pushValues(OPERATOR_IDS.rules, rules);
}
async function pushTxs(d: TestDriver, txs: Transaction[]) {
  await d.push(OPERATOR_IDS.transactions, txs.map((t) => ({ value: t, timestamp: t.ts })));
}
const alerts = (d: TestDriver) => d.output<Alert>(OPERATOR_IDS.alerts).sort((a, b) => a.ts - b.ts || a.alertId.localeCompare(b.alertId));
const brief = (a: Alert) => [a.ruleId, a.ruleVersion, a.txId, a.aggregate];

describe('fraud job: aggregate functions and comparisons', () => {
  const amounts = [100, 50, 200];

  it.each([
    ['SUM', '>', 300, [[2, 350]]],
    ['AVG', '<', 80, [[1, 75]]],
    ['MIN', '<=', 50, [[1, 50], [2, 50]]],
    ['MAX', '=', 100, [[0, 100], [1, 100]]],
    ['AVG', '>=', 350 / 3, [[2, 350 / 3]]],
    ['MAX', '!=', 100, [[2, 200]]],
  ] as const)('%s %s %d alerts on exactly the hand-computed transactions', async (fn, comparison, limit, expected) => {
    const d = await start();
    await pushRules(d, rule({ ruleId: 'r', function: fn, comparison, limit }));
    const txs = amounts.map((a, i) => tx(1_000 * (i + 1), a));
    await pushTxs(d, txs);
    await d.pushWatermark(OPERATOR_IDS.transactions, 10_000);
    expect(alerts(d).map(brief)).toEqual(expected.map(([i, agg]) => ['r', 1, txs[i].txId, agg]));
    expect(alerts(d).every((a) => a.key === '["p1"]' && a.limit === limit && a.alertId === `r@1/${a.txId}`)).toBe(true);
  });

  it.each([
    ['>', [3]],
    ['>=', [2, 3]],
    ['<', [1]],
    ['<=', [1, 2]],
    ['=', [2]],
    ['!=', [1, 3]],
  ] as const)('COUNT %s 2 over counts 1, 2, 3', async (comparison, counts) => {
    const d = await start();
    const { aggregateField: _unused, ...base } = rule({ ruleId: 'cnt', function: 'COUNT', comparison, limit: 2 });
    await pushRules(d, base);
    await pushTxs(d, [tx(1_000, 1), tx(2_000, 1), tx(3_000, 1)]);
    await d.pushWatermark(OPERATOR_IDS.transactions, 10_000);
    expect(alerts(d).map((a) => a.aggregate)).toEqual(counts);
  });
});

describe('fraud job: windows and state', () => {
  it('covers (ts − windowMs, ts], forgets expired transactions and judges a late one over what is left', async () => {
    const d = await start();
    await pushRules(d, rule({ ruleId: 'w', function: 'COUNT', comparison: '>=', limit: 2, windowMs: 5_000 }));
    const txs = [tx(1_000, 1), tx(5_999, 1), tx(6_000, 1), tx(12_000, 1)];
    await pushTxs(d, txs);
    await d.pushWatermark(OPERATOR_IDS.transactions, 20_000);
    // 1000: {1000}; 5999: {1000, 5999}; 6000: (1000, 6000] = {5999, 6000}; 12000: {12000}.
    expect(alerts(d).map((a) => [a.txId, a.aggregate])).toEqual([
      [txs[1].txId, 2],
      [txs[2].txId, 2],
    ]);
    // Late (behind the watermark): judged at once. Had the 1000 bucket survived cleanup, (500, 5500] would count 2.
    const late = tx(5_500, 1);
    await pushTxs(d, [late]);
    expect(alerts(d).some((a) => a.txId === late.txId)).toBe(false);
  });

  it('judges in event time: out-of-order arrival raises the same alerts as ordered arrival', async () => {
    const txs = [tx(1_000, 60), tx(2_000, 60), tx(3_000, 60), tx(4_000, 1)];
    const ordered = await start();
    await pushRules(ordered, rule({ ruleId: 'o', limit: 150 }));
    await pushTxs(ordered, txs);
    await ordered.pushWatermark(OPERATOR_IDS.transactions, 10_000);
    const expected = alerts(ordered).map(brief);
    await ordered.close();
    const shuffled = await start();
    await pushRules(shuffled, rule({ ruleId: 'o', limit: 150 }));
    await pushTxs(shuffled, [txs[3], txs[1], txs[0], txs[2]]);
    await shuffled.pushWatermark(OPERATOR_IDS.transactions, 10_000);
    expect(expected).toEqual([['o', 1, txs[2].txId, 180], ['o', 1, txs[3].txId, 181]]);
    expect(alerts(shuffled).map(brief)).toEqual(expected);
  });
});

describe('fraud job: rule versions', () => {
  it('judges transactions before an update by v1 and after it by v2, even when both are judged after the swap', async () => {
    const d = await start();
    await pushRules(d, rule({ ruleId: 'big', limit: 100, windowMs: 60_000 }));
    const before = [tx(1_000, 60), tx(2_000, 60)];
    await pushTxs(d, before);
    await pushRules(d, rule({ ruleId: 'big', limit: 200, windowMs: 60_000 }));
    const after = [tx(3_000, 60), tx(4_000, 60)];
    await pushTxs(d, after);
    await d.pushWatermark(OPERATOR_IDS.transactions, 70_000);
    // v1 (> 100): 60, 120 → alert on the second. v2 (> 200): 180, 240 → alert on the fourth only (v1 would alert on both).
    expect(alerts(d).map(brief)).toEqual([
      ['big', 1, before[1].txId, 120],
      ['big', 2, after[1].txId, 240],
    ]);
  });

  it('pauses and resumes a rule: nothing is judged or counted while paused', async () => {
    const d = await start();
    const base = rule({ ruleId: 'pr', function: 'COUNT', comparison: '>=', limit: 1, windowMs: 60_000 });
    await pushRules(d, base);
    const t1 = tx(1_000, 1);
    await pushTxs(d, [t1]);
    await pushRules(d, { ...base, state: 'PAUSED' });
    const t2 = tx(2_000, 1);
    await pushTxs(d, [t2]);
    await pushRules(d, { ...base, state: 'ACTIVE' });
    const t3 = tx(3_000, 1);
    await pushTxs(d, [t3]);
    await d.pushWatermark(OPERATOR_IDS.transactions, 10_000);
    expect(alerts(d).map(brief)).toEqual([
      ['pr', 1, t1.txId, 1],
      ['pr', 3, t3.txId, 2],
    ]);
  });

  it('keeps explicit versions, deletes rules, rejects invalid ones and acknowledges each per subtask', async () => {
    const d = await start();
    await pushRules(
      d,
      rule({ ruleId: 'v', version: 7 }),
      rule({ ruleId: 'bad', comparison: '=>' as never, windowMs: 120_000 }),
      { ruleId: 'v', deleted: true },
    );
    await pushTxs(d, [tx(1_000, 500)]);
    await d.pushWatermark(OPERATOR_IDS.transactions, 10_000);
    expect(alerts(d)).toEqual([]);
    const acks = d.output<RuleAck>(OPERATOR_IDS.acks);
    const bySubtask = (s: number) => acks.filter((a) => a.subtask === s).map((a) => [a.outcome, a.ruleId, a.ruleVersion ?? null]);
    for (const s of [0, 1]) {
      expect(bySubtask(s)).toEqual([
        ['applied', 'v', 7],
        ['rejected', 'bad', null],
        ['deleted', 'v', null],
      ]);
    }
    const rejected = acks.find((a) => a.outcome === 'rejected')!;
    expect(rejected.problems).toEqual([
      'rule.comparison: unknown operator "=>"; use one of >, >=, <, <=, =, != (did you mean ">="?)',
      "rule.windowMs: 120000 ms is longer than this job's limit of 60000 ms",
    ]);
    expect(rejected).toMatchObject({ tenantId: 'test-tenant', jobId: 'test-job', operatorId: OPERATOR_IDS.route, parallelism: 2 });
  });

  it('evaluates several rules keyed differently over the same transactions', async () => {
    const d = await start();
    const { aggregateField: _unused, ...countRule } = rule({ ruleId: 'card-merchant', groupingKeys: ['card', 'merchant'], function: 'COUNT', comparison: '>=', limit: 2 });
    await pushRules(d, rule({ ruleId: 'payer-sum', groupingKeys: ['payer'], limit: 100 }), countRule);
    const txs = [
      tx(1_000, 80, { payer: 'p1', card: 'c1', merchant: 'm1' }),
      tx(2_000, 30, { payer: 'p1', card: 'c2', merchant: 'm1' }),
      tx(3_000, 10, { payer: 'p2', card: 'c1', merchant: 'm1' }),
      tx(4_000, 10, { payer: 'p2', card: 'c1', merchant: 'm2' }),
    ];
    await pushTxs(d, txs);
    await d.pushWatermark(OPERATOR_IDS.transactions, 10_000);
    expect(alerts(d).map((a) => [a.ruleId, a.key, a.txId, a.aggregate])).toEqual([
      ['payer-sum', '["p1"]', txs[1].txId, 110],
      ['card-merchant', '["c1","m1"]', txs[2].txId, 2],
    ]);
  });

  it('runs a shadow version beside the live one: own state, its alerts only on the shadow output, until deleted', async () => {
    const d = await start();
    await pushRules(d, rule({ ruleId: 'amt', version: 1, limit: 100 }), rule({ ruleId: 'amt', version: 2, limit: 50, shadow: true }));
    const txs = [tx(1_000, 40), tx(2_000, 40), tx(3_000, 40)];
    await pushTxs(d, txs);
    await pushRules(d, { ruleId: 'amt', deleted: true, shadow: true });
    const after = tx(4_000, 40);
    await pushTxs(d, [after]);
    await d.pushWatermark(OPERATOR_IDS.transactions, 10_000);
    // Live v1 (> 100): 40, 80, 120, 160 — the shadow's copies of the transactions are not in its window.
    expect(alerts(d).map(brief)).toEqual([
      ['amt', 1, txs[2].txId, 120],
      ['amt', 1, after.txId, 160],
    ]);
    // Shadow v2 (> 50): 40, 80, 120; nothing after its deletion.
    const shadow = d.output<Alert>(OPERATOR_IDS.shadowAlerts).sort((a, b) => a.ts - b.ts);
    expect(shadow.map((a) => [a.alertId, a.ruleVersion, a.aggregate, a.shadow])).toEqual([
      [`amt#shadow@2/${txs[1].txId}`, 2, 80, true],
      [`amt#shadow@2/${txs[2].txId}`, 2, 120, true],
    ]);
    const acks = d.output<RuleAck>(OPERATOR_IDS.acks).filter((a) => a.subtask === 0);
    expect(acks.map((a) => [a.outcome, a.ruleVersion ?? null, a.shadow ?? false])).toEqual([
      ['applied', 1, false],
      ['applied', 2, true],
      ['deleted', null, true],
    ]);
  });

  it('carries rules and windows through a checkpoint: after a restore the same versions judge the same events', async () => {
    const d = await start();
    await pushRules(d, rule({ ruleId: 'cp', version: 4, limit: 100 }));
    await pushTxs(d, [tx(1_000, 60)]);
    const snapshot = await d.checkpoint(1);
    await d.close();
    const restored = await start(snapshot);
    const t2 = tx(2_000, 60);
    await pushTxs(restored, [t2]);
    await restored.pushWatermark(OPERATOR_IDS.transactions, 10_000);
    expect(alerts(restored).map(brief)).toEqual([['cp', 4, t2.txId, 120]]);
  });
});
