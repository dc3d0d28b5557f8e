import { describe, expect, it } from 'vitest';
import { tenantObjectPrefix, tenantTopics } from './tenant-data-sweeper';
import { couldRun } from './tenant-deletion';

describe('tenant deletion', () => {
  it('lets only resting deployments with no open run and desired state other than RUNNING go', () => {
    expect(couldRun({ status: 'CANCELLED', desiredState: 'CANCELLED', openRun: false })).toBe(false);
    expect(couldRun({ status: 'SUSPENDED', desiredState: 'SUSPENDED', openRun: false })).toBe(false);
    expect(couldRun({ status: 'FAILED', desiredState: 'CANCELLED', openRun: false })).toBe(false);
    expect(couldRun({ status: 'SUSPENDED', desiredState: 'RUNNING', openRun: false })).toBe(true);
    expect(couldRun({ status: 'FAILED', desiredState: 'RUNNING', openRun: false })).toBe(true);
    expect(couldRun({ status: 'CREATED', desiredState: 'CANCELLED', openRun: false })).toBe(true);
    expect(couldRun({ status: 'STOPPING', desiredState: 'SUSPENDED', openRun: true })).toBe(true);
    expect(couldRun({ status: 'CANCELLED', desiredState: 'CANCELLED', openRun: true })).toBe(true);
  });

  it("matches the tenant's topics and its jobs' internal ones, never another tenant's or job's", () => {
    const all = ['t.t1.in', 't.t12.in', 't.t1x', 'weir.t1.d1.dead-letters', 'weir.t1.d2.x', 'weir.t12.d1.x', 'weir.t1.d10.x', 'other'];
    expect(tenantTopics(all, 't1', ['d1'])).toEqual(['t.t1.in', 'weir.t1.d1.dead-letters']);
    expect(tenantObjectPrefix('t1')).toBe('tenants/t1/');
  });
});
