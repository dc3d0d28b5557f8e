import { describe, expect, it } from 'vitest';
import { memoryIoOf } from './memory-io';
import { defineJob, type KeyedBroadcastProcessFunction, memorySink, memorySource, valueState } from '../index';
import { TestDriver } from '../testing';

interface Rule {
  version: number;
  limit: number;
}

/** Judges each amount against the current rule; every output names the rule version that judged it. */
const judge: KeyedBroadcastProcessFunction<string, { card: string; amount: number }, Rule, Rule, string> = {
  processElement(tx, ctx, out) {
    const rule = ctx.broadcastState.get('rule');
    out.collect(`${tx.card}:${tx.amount}:v${rule?.version ?? 0}:${rule && tx.amount > rule.limit ? 'alert' : 'ok'}`);
  },
  processBroadcastElement(rule, ctx) {
    ctx.broadcastState.put('rule', rule);
  },
};

function rulesJob() {
  return defineJob({ name: 'rules', maxParallelism: 32 }, (b) => {
    const rules = b.source<Rule>('rules', memorySource()).broadcast();
    b.source<{ card: string; amount: number }>('tx', memorySource())
      .keyBy('by-card', (t) => t.card)
      .connect(rules)
      .process('judge', judge)
      .sink('out', memorySink());
  });
}

describe('broadcast state', () => {
  it('applies a rule on every subtask before any record that follows it in that subtask’s input', async () => {
    const driver = await TestDriver.start(rulesJob(), { parallelism: { default: 1, judge: 3 } });
    const cards = ['c1', 'c2', 'c3', 'c4', 'c5', 'c6'];
    await driver.pushValues('tx', cards.map((card) => ({ card, amount: 50 })));
    await driver.pushValues('rules', [{ version: 1, limit: 100 }]);
    await driver.pushValues('tx', cards.map((card) => ({ card, amount: 150 })));
    await driver.pushValues('rules', [{ version: 2, limit: 200 }]);
    await driver.pushValues('tx', cards.map((card) => ({ card, amount: 150 })));
    await driver.end('tx', 'rules');
    const out = driver.output<string>('out');
    for (const card of cards) {
      expect(out.filter((s) => s.startsWith(`${card}:`))).toEqual([
        `${card}:50:v0:ok`,
        `${card}:150:v1:alert`,
        `${card}:150:v2:ok`,
      ]);
    }
  });
});

describe('dead letters', () => {
  it('isolate poison records from map, keyBy and process; the rest of the batch goes on', async () => {
    const total = valueState<number>('total');
    const job = defineJob({ name: 'poison' }, (b) =>
      b
        .source<string>('in', memorySource())
        .map('parse', (s) => {
          const n = Number(s);
          if (Number.isNaN(n)) throw new Error(`not a number: ${s}`);
          return n;
        })
        .keyBy('by-parity', (n) => {
          if (n < 0) throw new Error('negative');
          return n % 2 === 0 ? 'even' : 'odd';
        })
        .process<string>('sum', {
          states: [total],
          processElement(n, ctx, out) {
            if (n === 13) throw new Error('unlucky');
            const t = (ctx.state(total).value() ?? 0) + n;
            ctx.state(total).update(t);
            out.collect(`${ctx.key}=${t}`);
          },
        })
        .sink('out', memorySink()),
    );
    const driver = await TestDriver.start(job);
    await driver.pushValues('in', ['1', 'x', '2', '-4', '13', '3']);
    expect(driver.output('out')).toEqual(['odd=1', 'even=2', 'odd=4']);
    const letters = driver.deadLetters().map((l) => ({ operator: l.operatorId, reason: l.reason, payload: l.payload.toString() }));
    expect(letters).toEqual([
      { operator: 'parse', reason: 'user-function', payload: '"x"' },
      { operator: 'by-parity', reason: 'key', payload: '-4' },
      { operator: 'sum', reason: 'user-function', payload: '13' },
    ]);
    expect(driver.deadLetters()[0].error).toBe('Error: not a number: x');
    const dlqCount = driver.job.metrics().reduce((sum, m) => sum + m.deadLettered, 0);
    expect(dlqCount).toBe(3);
    await driver.close();
  });

  it('dead-letter a throwing key selector that reads the source directly (keyed at the source), all-poison batches too', async () => {
    const job = defineJob({ name: 'poison-key' }, (b) =>
      b
        .source<number>('in', memorySource())
        .keyBy('by-sign', (n) => {
          if (n < 0) throw new Error('negative');
          return n % 2 === 0 ? 'even' : 'odd';
        })
        .process<string>('echo', { processElement: (n, ctx, out) => out.collect(`${ctx.key}:${n}`) })
        .sink('out', memorySink()),
    );
    const driver = await TestDriver.start(job, { parallelism: { default: 1, echo: 2 } });
    await driver.pushValues('in', [1, -2, 4]);
    await driver.pushValues('in', [-5]);
    await driver.pushValues('in', [7]);
    expect(driver.output<string>('out').sort()).toEqual(['even:4', 'odd:1', 'odd:7']);
    expect(driver.deadLetters().map((l) => [l.operatorId, l.reason, l.payload.toString()])).toEqual([
      ['by-sign', 'key', '-2'],
      ['by-sign', 'key', '-5'],
    ]);
    await driver.close();
  });
});

describe('stop', () => {
  it('returns even while a source is blocked by backpressure', async () => {
    const { generatorSource, runJob } = await import('../index');
    const { createStateBackend } = await import('@weir/state');
    const job = defineJob({ name: 'blocked' }, (b) =>
      b
        .source<number>('gen', generatorSource({ seed: 1, generate: (i) => i }))
        .keyBy('k', (n) => n % 10)
        .process<number>('slow', {
          processElement(n, _ctx, out) {
            out.collect(n);
          },
        })
        .sink('out', memorySink()),
    );
    const running = await runJob(job, { tenantId: 't', jobId: 'blocked', queueCapacity: 100, state: () => createStateBackend({ kind: 'memory' }) });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await running.stop();
    expect(memoryIoOf(running).collected('out').length).toBeGreaterThan(0);
  });
});
