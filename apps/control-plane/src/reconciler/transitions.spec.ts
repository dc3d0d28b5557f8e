import { describe, expect, it } from 'vitest';
import { DEPLOYMENT_STATUSES, RESTING_STATUSES, type DeploymentStatus } from '../deployments/deployment';
import { ALLOWED_TRANSITIONS, assertTransition, IllegalTransitionError, isAllowedTransition } from './transitions';

describe('the deployment transitions table', () => {
  it('allows the lifecycle’s edges and refuses others with a clear error', () => {
    expect(isAllowedTransition('RUNNING', 'RECOVERING')).toBe(true);
    expect(isAllowedTransition('STARTING', 'FAILED')).toBe(true);
    expect(() => assertTransition('CANCELLED', 'STARTING', 'restart')).toThrow(IllegalTransitionError);
    expect(() => assertTransition('FINISHED', 'RUNNING', 'it runs again')).toThrow(
      'illegal deployment transition FINISHED → RUNNING ("it runs again"): FINISHED may go to STARTING, UPGRADING, SUSPENDED, CANCELLED',
    );
    expect(() => assertTransition('CANCELLED', 'SUSPENDED', 'x')).toThrow(/CANCELLED may go to nothing \(final\)/);
    expect(() => assertTransition('SUSPENDED', 'RUNNING', 'resumed')).toThrow(IllegalTransitionError);
  });

  it('covers every status, names only statuses, and never lists staying put', () => {
    expect(Object.keys(ALLOWED_TRANSITIONS).sort()).toEqual([...DEPLOYMENT_STATUSES].sort());
    for (const [from, targets] of Object.entries(ALLOWED_TRANSITIONS) as [DeploymentStatus, readonly DeploymentStatus[]][]) {
      for (const to of targets) expect(DEPLOYMENT_STATUSES).toContain(to);
      expect(targets).not.toContain(from);
      expect(new Set(targets).size).toBe(targets.length);
    }
  });

  it('makes CANCELLED final, reachable from every status but the ones that must stop a run first', () => {
    expect(ALLOWED_TRANSITIONS.CANCELLED).toEqual([]);
    const direct = DEPLOYMENT_STATUSES.filter((s) => ALLOWED_TRANSITIONS[s].includes('CANCELLED'));
    expect(direct.sort()).toEqual(['CREATED', 'FAILED', 'FINISHED', 'STOPPING', 'SUSPENDED'].sort());
  });

  it('reaches RUNNING only through a status that starts a run, and every status from CREATED', () => {
    const intoRunning = DEPLOYMENT_STATUSES.filter((s) => ALLOWED_TRANSITIONS[s].includes('RUNNING'));
    expect(intoRunning.sort()).toEqual(['RECOVERING', 'RESCALING', 'STARTING', 'UPGRADING'].sort());
    const reached = new Set<DeploymentStatus>(['CREATED']);
    const queue: DeploymentStatus[] = ['CREATED'];
    for (let from = queue.pop(); from; from = queue.pop()) {
      for (const to of ALLOWED_TRANSITIONS[from]) {
        if (reached.has(to)) continue;
        reached.add(to);
        queue.push(to);
      }
    }
    expect([...reached].sort()).toEqual([...DEPLOYMENT_STATUSES].sort());
  });

  it('lets every resting status but CANCELLED be left again (by the tenant acting)', () => {
    for (const s of RESTING_STATUSES.filter((r) => r !== 'CANCELLED')) expect(ALLOWED_TRANSITIONS[s].length).toBeGreaterThan(0);
  });
});
