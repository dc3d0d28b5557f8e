import { describe, expect, it } from 'vitest';
import { LOST_FLOOR_MS, lostAmong, lostTimeoutMs, ObservationClock } from './observation-clock';

/** A clock ticked every 100 ms from `from` to `until`, as the sweeper's timer does while the event loop is healthy. */
function tickedUntil(until: number, clock = new ObservationClock(100), from = 0): ObservationClock {
  for (let t = from; t <= until; t += 100) clock.tick(t);
  return clock;
}

describe('ObservationClock (LOST rule)', () => {
  it('times out after three intervals, and never before the floor', () => {
    expect(lostTimeoutMs(2_000)).toBe(6_000);
    expect(lostTimeoutMs(200)).toBe(LOST_FLOOR_MS);
    expect(LOST_FLOOR_MS).toBeGreaterThanOrEqual(3_000);
  });

  it('declares a worker LOST once its silence, all of it observed, exceeds the timeout', () => {
    const clock = tickedUntil(10_000);
    expect(clock.isLost(3_000, 500, 10_000)).toBe(false);
    expect(clock.isLost(3_001, 500, 10_000)).toBe(true);
    expect(clock.isLost(6_001, 2_000, 10_000)).toBe(true);
  });

  it('spares a worker whose silence is the control plane stalling: a late timer, then heartbeats applied late', () => {
    const clock = tickedUntil(9_000);
    // The event loop stalls 0.8 s: the next tick (due at 9.1 s) fires at 9.9 s, with the sweep right behind it.
    clock.tick(9_900);
    expect(clock.observedMs(3_300, 9_900)).toBe(3_300 - 800);
    expect(clock.isLost(3_300, 200, 9_900)).toBe(false);
    // The stall scrolls out of the silence it explained: a worker that stays silent is LOST one stall later.
    const later = tickedUntil(13_000, clock, 10_000);
    expect(later.isLost(3_300, 200, 13_000)).toBe(true);
  });

  it('counts only the part of a stall inside the silence, and ignores timer jitter', () => {
    const clock = tickedUntil(5_000);
    clock.tick(6_000); // 0.9 s stall, 5.1 → 6.0
    clock.tick(6_140); // 40 ms late: jitter
    expect(clock.observedMs(500, 6_140)).toBe(500 - 360); // the silence began at 5.64 s
    expect(clock.observedMs(2_000, 6_140)).toBe(2_000 - 900);
  });

  it('gives the worker the largest send-to-applied lag seen during its silence', () => {
    const clock = tickedUntil(10_000);
    clock.noteLag(5_000, 5_000); // before the silence: irrelevant to it
    clock.noteLag(8_000, 900);
    clock.noteLag(8_050, 400); // same tick: folded into the 900
    expect(clock.observedMs(3_500, 10_000)).toBe(3_500 - 900);
    expect(clock.isLost(3_500, 200, 10_000)).toBe(false);
    expect(clock.isLost(4_000, 200, 10_000)).toBe(true);
  });

  it('forgets stalls older than its horizon', () => {
    const clock = new ObservationClock(100, 1_000);
    clock.tick(0);
    clock.tick(2_000);
    expect(clock.observedMs(2_000, 2_000)).toBe(100);
    for (let t = 2_100; t <= 3_100; t += 100) clock.tick(t);
    expect(clock.observedMs(3_100, 3_100)).toBe(3_100);
  });

  it('never declares LOST a worker with an event pending in the queue, nor anyone when that is unknown', () => {
    const clock = tickedUntil(10_000);
    const silent = [
      { id: 'queued', heartbeatMs: 200, silentMs: 5_000 },
      { id: 'dead', heartbeatMs: 200, silentMs: 5_000 },
      { id: 'recent', heartbeatMs: 2_000, silentMs: 5_000 },
    ];
    expect(lostAmong(silent, new Set(['queued']), clock, 10_000).map((w) => w.id)).toEqual(['dead']);
    expect(lostAmong(silent, 'all', clock, 10_000)).toEqual([]);
  });
});
