import { describe, expect, it } from 'vitest';
import { outcomeOf, rolloutStatus } from './rollout-progress';
import type { Rollout, RolloutAck } from './rule-set';

const rollout: Rollout = {
  id: 'ro_1', deploymentId: 'd1', version: 3, kind: 'ROLLOUT', phase: 'ROLLING_OUT', publishTs: 1_000, rulesTopic: 't.x.rules', acksTopic: 't.x.acks',
  expectedRuleIds: ['a', 'gone'], rulesOffset: '41', message: null, createdAt: new Date(0), completedAt: null,
};
const ack = (subtask: number, ruleId: string, outcome: RolloutAck['outcome'] = 'applied', inputPosition: RolloutAck['inputPosition'] = null): RolloutAck => ({
  operatorId: 'route', subtask, parallelism: 2, ruleId, outcome, problems: outcome === 'rejected' ? ['rule.limit: bad'] : null, acksOffset: '0:1', ackedAt: new Date(5),
  inputPosition,
});

describe('rolloutStatus', () => {
  it('counts a subtask once it acknowledged every expected rule, deletions included', () => {
    const s = rolloutStatus(rollout, [ack(0, 'a'), ack(0, 'gone', 'deleted'), ack(1, 'a')]);
    expect(s.subtasks.map((t) => [t.subtask, t.appliedVersion, t.acknowledgedRules, t.rulesOffset])).toEqual([[0, 3, 2, '41'], [1, null, 1, null]]);
    expect([s.acknowledgedSubtasks, s.totalSubtasks]).toEqual([1, 2]);
    expect(outcomeOf(s)).toBeNull();
  });

  it('is ACTIVE when every subtask applied it, and lists a silent subtask as not applied', () => {
    expect(outcomeOf(rolloutStatus(rollout, [0, 1].flatMap((i) => [ack(i, 'a'), ack(i, 'gone', 'deleted')])))?.phase).toBe('ACTIVE');
    const onlyFirst = rolloutStatus(rollout, [ack(0, 'a'), ack(0, 'gone', 'deleted')]);
    expect(onlyFirst.subtasks).toHaveLength(2);
    expect(onlyFirst.subtasks[1]).toMatchObject({ subtask: 1, appliedVersion: null, lastAckAt: null });
  });

  it('is FAILED when a subtask rejected a rule, naming it', () => {
    const s = rolloutStatus(rollout, [ack(0, 'a', 'rejected')]);
    expect(outcomeOf(s)).toEqual({ phase: 'FAILED', message: 'subtask 0 rejected a: rule.limit: bad' });
  });

  it("gives a subtask's input position once it applied the whole version: per partition, after its last rule", () => {
    const s = rolloutStatus(rollout, [
      ack(0, 'a', 'applied', { 'tx:0': '9', 'tx:1': '120' }), ack(0, 'gone', 'deleted', { 'tx:0': '10', 'tx:1': '120' }),
      ack(1, 'a', 'applied', { 'tx:0': '7' }),
    ]);
    expect(s.subtasks.map((t) => t.inputPosition)).toEqual([{ 'tx:0': '10', 'tx:1': '120' }, null]);
    expect(rolloutStatus(rollout, [ack(0, 'a'), ack(0, 'gone', 'deleted')]).subtasks[0].inputPosition).toBeNull();
  });

  it('has no total before the first ack', () => {
    const s = rolloutStatus(rollout, []);
    expect([s.totalSubtasks, s.acknowledgedSubtasks, outcomeOf(s)]).toEqual([null, 0, null]);
  });
});
