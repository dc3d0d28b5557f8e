import { describe, expect, it } from 'vitest';
import { commandStateOf } from './command-gateway';

describe('commandStateOf (a command state from its BullMQ state, then its hash)', () => {
  const running = { returnvalue: null, progress: { moved: 3, total: 8 } };
  const completed = { returnvalue: { rescaleId: 'r1' }, finishedOn: 2, progress: { moved: 8, total: 8 } };

  it('is completed with the result, or failed with the reason, once the hash read after the state says it finished', () => {
    expect(commandStateOf('completed', completed)).toEqual({ kind: 'completed', result: { rescaleId: 'r1' } });
    expect(commandStateOf('failed', { returnvalue: null, failedReason: 'refused', finishedOn: 2, progress: 0 })).toEqual({ kind: 'failed', reason: 'refused' });
    expect(commandStateOf('failed', { returnvalue: null, finishedOn: 2, progress: 0 })).toEqual({ kind: 'failed', reason: 'the worker gave no reason' });
  });

  it('is queued, with its progress, while it waits or runs, and when a finished state meets a hash that did not finish (retried in between)', () => {
    for (const state of ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'unknown', 'completed', 'failed']) {
      expect(commandStateOf(state, running)).toEqual({ kind: 'queued', progress: { moved: 3, total: 8 } });
    }
  });

  it('is missing when the job is not there', () => {
    expect(commandStateOf('unknown', undefined)).toEqual({ kind: 'missing' });
    expect(commandStateOf('completed', undefined)).toEqual({ kind: 'missing' });
  });
});
