import { describe, expect, it } from 'vitest';
import { coolDownLeftMs, isRepeat, stabilize, type StabilizedNeed } from './stabilization';

const windows = { scaleUpWindowMs: 60_000, scaleDownWindowMs: 600_000 };

/** Runs proposals through stabilize look after look, one every 15 s from t = 0; returns what each look said. */
function looks(proposals: ({ direction: 'up' | 'down'; parallelism: number } | null)[]): { due: number | null; need: StabilizedNeed | null }[] {
  let need: StabilizedNeed | null = null;
  return proposals.map((p, i) => {
    const s = stabilize(need, p, i * 15_000, windows);
    need = s.need;
    return { due: s.due, need: s.need };
  });
}

describe('stabilization windows', () => {
  it('acts on a need up only once it held for the up window, on the smallest parallelism seen meanwhile', () => {
    const up = (n: number) => ({ direction: 'up' as const, parallelism: n });
    const seen = looks([up(4), up(3), up(5), up(4), up(4)]);
    expect(seen.map((s) => s.due)).toEqual([null, null, null, null, 3]);
    expect(seen[4].need).toEqual({ direction: 'up', sinceMs: 0, parallelism: 3 });
  });

  it('starts over when the need breaks or turns', () => {
    const up = { direction: 'up' as const, parallelism: 4 };
    const seen = looks([up, up, up, null, up, up, up, up, { direction: 'down', parallelism: 1 }]);
    // The break at 45 s resets the clock: due again only at 60 s after 60 s (the look at 120 s).
    expect(seen.map((s) => s.due)).toEqual([null, null, null, null, null, null, null, null, null]);
    expect(seen[8].need).toEqual({ direction: 'down', sinceMs: 120_000, parallelism: 1 });
    expect(looks([up, up, up, up, up, up, up, up, up]).map((s) => s.due !== null)).toEqual([false, false, false, false, true, true, true, true, true]);
  });

  it('waits the longer down window, acting on the largest parallelism seen meanwhile (the most cautious step down)', () => {
    const down = (n: number) => ({ direction: 'down' as const, parallelism: n });
    const proposals = Array.from({ length: 41 }, (_, i) => down(i === 7 ? 3 : 2));
    const seen = looks(proposals);
    expect(seen.slice(0, 40).every((s) => s.due === null)).toBe(true);
    expect(seen[40].due).toBe(3);
  });

  it('acts at once with a window of 0', () => {
    expect(stabilize(null, { direction: 'up', parallelism: 3 }, 5, { scaleUpWindowMs: 0, scaleDownWindowMs: 0 }).due).toBe(3);
  });
});

describe('cool-down and repeats', () => {
  it('holds for the cool-down after the last change, and not without one', () => {
    expect(coolDownLeftMs(10_000, 12_000, 5_000)).toBe(3_000);
    expect(coolDownLeftMs(10_000, 15_000, 5_000)).toBe(0);
    expect(coolDownLeftMs(null, 15_000, 5_000)).toBe(0);
  });

  it('takes the same kind, parallelism and code within the repeat time as the same decision', () => {
    const latest = { kind: 'SCALE_UP', toParallelism: 4, code: 'rates', decidedAtMs: 0 };
    expect(isRepeat(latest, { kind: 'SCALE_UP', toParallelism: 4, code: 'rates' }, 299_999, 300_000)).toBe(true);
    expect(isRepeat(latest, { kind: 'SCALE_UP', toParallelism: 4, code: 'rates' }, 300_000, 300_000)).toBe(false);
    expect(isRepeat(latest, { kind: 'SCALE_UP', toParallelism: 5, code: 'rates' }, 1, 300_000)).toBe(false);
    expect(isRepeat({ ...latest, kind: 'HOLD', code: 'imbalance' }, { kind: 'HOLD', toParallelism: 4, code: 'hot-key' }, 1, 300_000)).toBe(false);
    expect(isRepeat(null, { kind: 'HOLD', toParallelism: 4, code: 'hot-key' }, 1, 300_000)).toBe(false);
  });
});
