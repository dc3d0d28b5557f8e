import { describe, expect, it } from 'vitest';
import type { SloMinute, SloObjective } from './slo';
import { evaluateSlo, transitionEvent } from './slo-math';

const MIN = 60_000;
const objective: SloObjective = { percentile: 'p99', thresholdMs: 500, target: 0.99, windowMinutes: 60 };
const at = 1_764_633_600_000; // a minute start

function minute(offset: number, p99: number, samples = 100): SloMinute {
  return { minute: at - offset * MIN, samples, p50: p99 / 4, p95: p99 / 2, p99, p999: p99 * 2, max: p99 * 3 };
}

describe('evaluateSlo', () => {
  it('is NO_DATA without minutes that have samples', () => {
    const result = evaluateSlo(objective, [minute(0, 900, 0)], at);
    expect(result).toMatchObject({ state: 'NO_DATA', compliance: null, burnRate: null, goodMinutes: 0, badMinutes: 0 });
  });

  it('computes compliance and burn rate by hand: 60 minutes, 2 bad, one of them in the last 5', () => {
    const minutes = Array.from({ length: 60 }, (_, i) => minute(i, i === 3 || i === 40 ? 501 : 500));
    const result = evaluateSlo(objective, minutes, at);
    expect(result.goodMinutes).toBe(58);
    expect(result.badMinutes).toBe(2);
    expect(result.compliance).toBeCloseTo(58 / 60, 12);
    // (2/60) / (1 - 0.99) = 3.333…
    expect(result.burnRate).toBeCloseTo(10 / 3, 9);
    // last 5 minutes: 1 bad of 5 → 0.2 / 0.01 = 20
    expect(result.burnRate5m).toBeCloseTo(20, 9);
    expect(result.errorBudgetRemaining).toBeCloseTo(1 - 10 / 3, 9);
    expect(result.state).toBe('BREACHED');
  });

  it('ignores minutes outside the window and minutes without samples', () => {
    const minutes = [minute(0, 100), minute(1, 100, 0), minute(60, 9_999), minute(-1, 9_999)];
    const result = evaluateSlo(objective, minutes, at);
    expect(result).toMatchObject({ goodMinutes: 1, badMinutes: 0, compliance: 1, burnRate: 0, burnRate5m: 0, state: 'OK' });
  });

  it('uses the objective percentile', () => {
    const result = evaluateSlo({ ...objective, percentile: 'p50', thresholdMs: 100 }, [minute(0, 800)], at);
    // p50 = 200 > 100
    expect(result.badMinutes).toBe(1);
  });

  it('is OK exactly at the target', () => {
    const minutes = Array.from({ length: 100 }, (_, i) => minute(i % 60, 100));
    const lenient = { ...objective, target: 0.5 };
    const half = [minute(0, 100), minute(1, 900)];
    expect(evaluateSlo(lenient, half, at)).toMatchObject({ compliance: 0.5, state: 'OK', burnRate: 1 });
    expect(evaluateSlo(objective, minutes, at).state).toBe('OK');
  });
});

describe('transitionEvent', () => {
  it('records a breach on entering BREACHED and a recovery on leaving it for OK', () => {
    expect(transitionEvent('OK', 'BREACHED')).toBe('BREACH');
    expect(transitionEvent('NO_DATA', 'BREACHED')).toBe('BREACH');
    expect(transitionEvent('BREACHED', 'BREACHED')).toBeNull();
    expect(transitionEvent('BREACHED', 'OK')).toBe('RECOVERED');
    expect(transitionEvent('OK', 'OK')).toBeNull();
    expect(transitionEvent('BREACHED', 'NO_DATA')).toBeNull();
  });
});
