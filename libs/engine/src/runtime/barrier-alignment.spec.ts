import { describe, expect, it } from 'vitest';
import { BarrierAlignment } from './barrier-alignment';
import type { InputMessage } from './records';

const data = (channel: number, value: number): InputMessage => ({ kind: 'data', channel, records: [{ value, timestamp: 0, ingestMs: 0 }] });

describe('BarrierAlignment', () => {
  it('holds what a channel past the barrier sends until every channel delivered it or ended, then hands it back in order', () => {
    const alignment = new BarrierAlignment();
    expect(alignment.hold(data(0, 1))).toBe(false); // nothing aligning: handled at once
    alignment.arrive(7, 'data:0');
    expect(alignment.aligning).toBe(true);
    expect(alignment.hold(data(1, 2))).toBe(false); // channel 1 has not delivered the barrier: its records are before the cut
    expect(alignment.hold(data(0, 3))).toBe(true);
    expect(alignment.hold({ kind: 'watermark', channel: 0, watermark: 5 })).toBe(true);
    expect(alignment.hold({ kind: 'tick' })).toBe(false); // belongs to no channel
    const channels = ['data:0', 'data:1', 'broadcast:0'];
    alignment.arrive(7, 'data:1');
    expect(alignment.complete(channels, new Set())).toBeNull(); // the broadcast input has not delivered it
    const done = alignment.complete(channels, new Set(['broadcast:0'])); // an ended channel counts as delivered
    expect(done?.checkpointId).toBe(7);
    expect(done?.held).toEqual([data(0, 3), { kind: 'watermark', channel: 0, watermark: 5 }]);
    expect(alignment.aligning).toBe(false);
    expect(alignment.hold(data(0, 4))).toBe(false);
  });
});
