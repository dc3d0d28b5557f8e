import { describe, expect, it } from 'vitest';
import { recheckAfter, timingFor } from './reconcile-timing';

describe('reconcile timing', () => {
  it('follows the heartbeat, within bounds', () => {
    expect(timingFor(2_000)).toMatchObject({ tickMs: 1_000, activeRecheckMs: 1_000, runningRecheckMs: 2_000 });
    expect(timingFor(200)).toMatchObject({ tickMs: 100, runningRecheckMs: 200 });
    expect(timingFor(60).tickMs).toBe(50);
  });

  it('never looks at resting deployments on its own', () => {
    const timing = timingFor(2_000);
    for (const status of ['SUSPENDED', 'FAILED', 'FINISHED', 'CANCELLED'] as const) expect(recheckAfter(status, timing)).toBeNull();
    expect(recheckAfter('RUNNING', timing)).toBe(2_000);
    expect(recheckAfter('STARTING', timing)).toBe(1_000);
  });
});
