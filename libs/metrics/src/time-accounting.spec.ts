import { describe, expect, it } from 'vitest';
import { TimeAccounting } from './time-accounting';
import { seededRandom } from '@weir/datagen';

describe('TimeAccounting', () => {
  it('attributes each span to the state being left', () => {
    const time = new TimeAccounting(0, 'idle');
    time.enter('busy', 100); // 100 idle
    time.enter('backpressured', 700); // 600 busy
    time.enter('busy', 900); // 200 backpressured
    const shares = time.take(1000); // 100 busy
    expect(shares).toEqual({ intervalMs: 1000, busyMsPerSec: 700, backpressuredMsPerSec: 200, idleMsPerSec: 100 });
  });

  it('carries the current state into the next interval', () => {
    const time = new TimeAccounting(0, 'busy');
    time.take(500);
    expect(time.state).toBe('busy');
    expect(time.take(2500)).toEqual({ intervalMs: 2000, busyMsPerSec: 1000, backpressuredMsPerSec: 0, idleMsPerSec: 0 });
  });

  it('sums to 1000 ms per second over any interval, for random transitions', () => {
    const random = seededRandom(5);
    const states = ['busy', 'backpressured', 'idle'] as const;
    const time = new TimeAccounting(0);
    let now = 0;
    for (let interval = 0; interval < 20; interval++) {
      for (let i = 0; i < 200; i++) {
        now += random() * 3;
        time.enter(states[Math.floor(random() * 3)], now);
      }
      now += random();
      const shares = time.take(now);
      expect(shares.busyMsPerSec + shares.backpressuredMsPerSec + shares.idleMsPerSec).toBeCloseTo(1000, 6);
    }
  });

  it('counts a backwards clock step as no time and resumes from the new reading', () => {
    const time = new TimeAccounting(1000, 'busy');
    time.enter('idle', 400); // clock stepped back 600 ms
    time.enter('busy', 500); // 100 idle
    const shares = time.take(600); // 100 busy
    expect(shares.busyMsPerSec).toBe(500);
    expect(shares.idleMsPerSec).toBe(500);
  });

  it('reports zeros for an empty interval', () => {
    const time = new TimeAccounting(50);
    expect(time.take(50)).toEqual({ intervalMs: 0, busyMsPerSec: 0, backpressuredMsPerSec: 0, idleMsPerSec: 0 });
  });
});
