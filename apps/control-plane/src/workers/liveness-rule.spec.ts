import { describe, expect, it } from 'vitest';
import { LOST_FLOOR_MS, lostAmong, lostTimeoutMs } from './liveness-rule';

describe('liveness rule', () => {
  it('times out after three intervals, and never before the floor', () => {
    expect(lostTimeoutMs(2_000)).toBe(6_000);
    expect(lostTimeoutMs(200)).toBe(LOST_FLOOR_MS);
    expect(LOST_FLOOR_MS).toBeGreaterThanOrEqual(3_000);
  });

  it('declares LOST a worker silent beyond its timeout with nothing pending in the queue', () => {
    const silent = [
      { id: 'dead', heartbeatMs: 200, silentMs: 3_001 },
      { id: 'floor', heartbeatMs: 200, silentMs: 3_000 },
      { id: 'slow', heartbeatMs: 2_000, silentMs: 5_000 },
    ];
    expect(lostAmong(silent, new Set()).map((w) => w.id)).toEqual(['dead']);
  });

  it('never declares LOST a worker with an event pending in the queue, nor anyone when that is unknown', () => {
    const silent = [
      { id: 'queued', heartbeatMs: 200, silentMs: 5_000 },
      { id: 'dead', heartbeatMs: 200, silentMs: 5_000 },
    ];
    expect(lostAmong(silent, new Set(['queued'])).map((w) => w.id)).toEqual(['dead']);
    expect(lostAmong(silent, 'all')).toEqual([]);
  });
});
