import { describe, expect, it } from 'vitest';
import { paced } from './schedule';
import { GeneratorOptionsError, TransactionStream } from './transactions';
import { zipfTopShare } from './zipf';

const base = { seed: 42, ratePerSec: 1_000, startTime: 1_700_000_000_000 };

describe('TransactionStream', () => {
  it('is deterministic per seed, whatever the slicing, and differs across seeds', () => {
    const a = new TransactionStream(base).range(0, 2_000);
    const b = new TransactionStream(base);
    const sliced = [...b.range(1_000, 2_000).reverse(), ...b.range(0, 1_000).reverse()].reverse();
    expect(sliced).toEqual(a);
    const other = new TransactionStream({ ...base, seed: 43 }).range(0, 2_000);
    expect(other.filter((t, i) => t.payer === a[i].payer && t.amount === a[i].amount).length).toBeLessThan(200);
    expect(new Set(a.map((t) => t.txId)).size).toBe(2_000);
  });

  it('stamps scheduled times at the fixed rate', () => {
    const s = new TransactionStream({ ...base, ratePerSec: 300 });
    expect(s.range(0, 4).map((t) => t.ts - base.startTime)).toEqual([0, 3, 6, 10]);
    expect(s.at(300).ts - base.startTime).toBe(1_000);
    expect(s.countBefore(1_000)).toBe(300);
  });

  it('skews keys: the hottest merchant carries its Zipf share', () => {
    const s = new TransactionStream({ ...base, merchants: { keys: 1_000, exponent: 1.2 } });
    const n = 50_000;
    let hot = 0;
    for (let i = 0; i < n; i++) if (s.at(i).merchant === 'm-0') hot++;
    const expected = zipfTopShare(1_000, 1.2);
    expect(Math.abs(hot / n - expected)).toBeLessThan(0.01);
  });

  it('gives the burst key its share inside the burst and its usual share outside', () => {
    const burst = { field: 'card' as const, key: 'c-0', share: 0.3, atMs: 10_000, forMs: 10_000 };
    const s = new TransactionStream({ ...base, cards: { keys: 1_000, exponent: 1.0 }, burst });
    const share = (from: number, to: number) => s.range(from, to).filter((t) => t.card === 'c-0').length / (to - from);
    expect(Math.abs(share(10_000, 20_000) - 0.3)).toBeLessThan(0.015);
    const usual = zipfTopShare(1_000, 1.0);
    expect(Math.abs(share(0, 10_000) - usual)).toBeLessThan(0.01);
    expect(Math.abs(share(20_000, 30_000) - usual)).toBeLessThan(0.01);
  });

  it('keeps amounts integral and within bounds', () => {
    const txs = new TransactionStream({ ...base, amount: { min: 100, max: 10_000 } }).range(0, 5_000);
    expect(txs.every((t) => Number.isInteger(t.amount) && t.amount >= 100 && t.amount <= 10_000)).toBe(true);
  });

  it('rejects bad options with the reason', () => {
    expect(() => new TransactionStream({ ...base, ratePerSec: 0 })).toThrow(GeneratorOptionsError);
    expect(() => new TransactionStream({ ...base, burst: { field: 'card', key: 'c-1', share: 1.5, atMs: 0, forMs: 1 } })).toThrow(/share/);
  });
});

describe('paced', () => {
  it('hands out due events in batches on schedule, catching up after a stall with timestamps unchanged', async () => {
    let clock = base.startTime;
    const sleeps: number[] = [];
    const stream = new TransactionStream({ ...base, ratePerSec: 100 });
    const batches: number[][] = [];
    for await (const batch of paced(stream, {
      count: 50,
      maxBatch: 20,
      now: () => clock,
      sleep: async (ms) => {
        sleeps.push(ms);
        // The first wait stalls for 300 ms (30 events fall due at once); the others advance exactly.
        clock += sleeps.length === 1 ? 300 : ms;
      },
    })) {
      batches.push(batch.map((t) => t.ts - base.startTime));
    }
    const all = batches.flat();
    expect(all).toEqual(Array.from({ length: 50 }, (_, i) => i * 10));
    expect(batches[0]).toEqual([0]);
    expect(batches[1]).toHaveLength(20);
    expect(Math.max(...batches.map((b) => b.length))).toBeLessThanOrEqual(20);
  });
});
