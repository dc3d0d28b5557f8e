import type { RescaleReport } from '@weir/protocol';
import { describe, expect, it } from 'vitest';
import { decideRescaleCommand } from './rescale-decision';

const now = new Date('2026-01-01T12:00:00Z');
const rescale: { rescaleId: string; toProcesses: number; startedAt: Date | null } = { rescaleId: 'r1', toProcesses: 4, startedAt: new Date(now.getTime() - 60_000) };
const report: RescaleReport = { rescaleId: 'r1', processes: 4, parallelism: { src: 2, counts: 4 }, routing: { counts: [0, 1, 2, 3] }, moved: [], durationMs: 10 };
const decide = (command: Parameters<typeof decideRescaleCommand>[0]['command'], r = rescale) => decideRescaleCommand({ rescale: r, workerId: 'w1', command, now });

describe('decideRescaleCommand', () => {
  it('waits while the command is queued or running, with the progress process 0 published', () => {
    expect(decide({ kind: 'queued', progress: { moved: 3, total: 16 } })).toEqual({ kind: 'wait', progress: { moved: 3, total: 16 } });
    // BullMQ's default progress is 0; anything but { moved, total } is no progress at all.
    expect(decide({ kind: 'queued', progress: 0 })).toEqual({ kind: 'wait', progress: null });
    expect(decide({ kind: 'queued' })).toEqual({ kind: 'wait', progress: null });
    expect(decide(null)).toEqual({ kind: 'wait', progress: null });
  });

  it('is done with a report of this rescale at the process count asked for', () => {
    expect(decide({ kind: 'completed', result: report })).toEqual({ kind: 'done', report });
  });

  it('falls back on a refusal, or on a result that is not this rescale’s report', () => {
    expect(decide({ kind: 'failed', reason: 'a keyed operator feeds another keyBy' })).toEqual({
      kind: 'fall-back',
      reason: "process 0's worker w1 refused it: a keyed operator feeds another keyBy",
    });
    expect(decide({ kind: 'completed', result: { moved: 1 } })).toMatchObject({ kind: 'fall-back', reason: expect.stringMatching(/not a rescale report/) });
    expect(decide({ kind: 'completed', result: { ...report, rescaleId: 'r2' } })).toMatchObject({ reason: expect.stringMatching(/another rescale \(r2\)/) });
    expect(decide({ kind: 'completed', result: { ...report, processes: 3 } })).toMatchObject({ reason: expect.stringMatching(/3 processes where 4 were asked for/) });
  });

  it('sends a missing command again, unless it went out longer ago than a finished one is kept', () => {
    expect(decide({ kind: 'missing' })).toEqual({ kind: 'send' });
    expect(decide({ kind: 'missing' }, { ...rescale, startedAt: null })).toEqual({ kind: 'send' });
    const old = { ...rescale, startedAt: new Date(now.getTime() - 21 * 3600_000) };
    expect(decide({ kind: 'missing' }, old)).toMatchObject({ kind: 'fall-back', reason: expect.stringMatching(/outcome is unknown/) });
  });
});
