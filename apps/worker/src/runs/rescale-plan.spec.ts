import type { StageShape } from '@weir/engine';
import { describe, expect, it } from 'vitest';
import { ownersAfter, partitionMovesOf, planRescale, RescaleRefusedError } from './rescale-plan';

const source = (parallelism: number, feeds = ['totals']): StageShape => ({ id: 'in', kind: 'source', parallelism, operatorIds: ['in', 'by-key'], feeds, broadcastFeeds: [] });
/** A Kafka source feeding only keyBy edges: it rescales live. */
const partitioned = (parallelism: number, partitions: number): StageShape => ({ ...source(parallelism), partitions });
const keyed = (id: string, parallelism: number, feeds: string[] = [], broadcastFeeds: string[] = []): StageShape => ({
  id,
  kind: 'keyed',
  parallelism,
  operatorIds: [id, `${id}-out`],
  feeds,
  broadcastFeeds,
});
const contiguous = (p: number, n = 32) => Array.from({ length: n }, (_, kg) => Math.floor((kg * p) / n));

describe('planRescale', () => {
  it('plans even shares for a keyed stage that follows the process count', () => {
    const plan = planRescale([source(2), keyed('totals', 2)], () => contiguous(2), { fromProcesses: 2, toProcesses: 4, parallelism: { totals: 4 } });
    expect(plan.parallelism.get('totals')).toBe(4);
    const after = ownersAfter(contiguous(2), plan.moves.get('totals')!);
    expect([0, 1, 2, 3].map((s) => after.filter((o) => o === s).length)).toEqual([8, 8, 8, 8]);
  });

  it('keeps sources: a uniform parallelism names them too, and they are left as they are', () => {
    const plan = planRescale([source(2), keyed('totals', 2)], () => contiguous(2), { fromProcesses: 2, toProcesses: 3, parallelism: { in: 3, totals: 3 } });
    expect([...plan.parallelism]).toEqual([['totals', 3]]);
  });

  it('deals a source that rescales live over its new subtasks, moving only the partitions that change subtask', () => {
    const plan = planRescale([partitioned(2, 8), keyed('totals', 2)], () => contiguous(2), { fromProcesses: 2, toProcesses: 4, parallelism: { in: 4, totals: 4 } });
    expect([...plan.parallelism]).toEqual([['in', 4], ['totals', 4]]);
    expect(plan.partitionMoves.get('in')).toEqual([
      { partition: 2, fromSubtask: 0, toSubtask: 2 },
      { partition: 3, fromSubtask: 1, toSubtask: 3 },
      { partition: 6, fromSubtask: 0, toSubtask: 2 },
      { partition: 7, fromSubtask: 1, toSubtask: 3 },
    ]);
    const back = planRescale([partitioned(4, 8), keyed('totals', 4)], () => contiguous(4), { fromProcesses: 4, toProcesses: 2, parallelism: { in: 2, totals: 2 } });
    expect(back.partitionMoves.get('in')!.every((m) => m.fromSubtask >= 2 && m.toSubtask === m.partition % 2)).toBe(true);
  });

  it('runs a source at most one subtask per partition', () => {
    const plan = planRescale([partitioned(2, 3), keyed('totals', 2)], () => contiguous(2), { fromProcesses: 2, toProcesses: 4, parallelism: { in: 4, totals: 4 } });
    expect(plan.parallelism.get('in')).toBe(3);
    expect(partitionMovesOf(3, 2, 3)).toEqual([{ partition: 2, fromSubtask: 0, toSubtask: 2 }]);
  });

  it('rescales two keyed stages in a row (the second aligns over as many channels as the first has)', () => {
    const plan = planRescale([source(2), keyed('route', 2, ['evaluate']), keyed('evaluate', 2)], () => contiguous(2), { fromProcesses: 2, toProcesses: 4, parallelism: { route: 4, evaluate: 4 } });
    expect([...plan.parallelism]).toEqual([['route', 4], ['evaluate', 4]]);
  });

  it.each([
    ['a run in one process', [source(1), keyed('totals', 1)], { fromProcesses: 1, toProcesses: 2, parallelism: { totals: 2 } }, /one process/],
    ['fewer processes than a source runs subtasks', [source(4), keyed('totals', 4)], { fromProcesses: 4, toProcesses: 2, parallelism: { totals: 2 } }, /source "in" runs 4 subtasks/],
    ['a source wider than the processes', [partitioned(4, 8), keyed('totals', 4)], { fromProcesses: 4, toProcesses: 2, parallelism: { totals: 2 } }, /source "in" would run 4 subtasks/],
    ['a keyed stage broadcasting to another', [source(2), keyed('totals', 2, [], ['more']), keyed('more', 2)], { fromProcesses: 2, toProcesses: 4, parallelism: { totals: 4, more: 4 } }, /broadcasts to "more"/],
    ['an event-time window', [source(2), { ...keyed('counts', 2), windows: true as const }], { fromProcesses: 2, toProcesses: 4, parallelism: { counts: 4 } }, /"counts" is an event-time window/],
    ['a stage not spanning the processes', [source(2), keyed('totals', 2), keyed('other', 1)], { fromProcesses: 2, toProcesses: 4, parallelism: { totals: 4, other: 2 } }, /"other" would go from 1 to 2/],
    ['an operator the job lacks', [source(2), keyed('totals', 2)], { fromProcesses: 2, toProcesses: 4, parallelism: { nope: 4 } }, /no operator "nope"/],
    ['more processes and nothing to run in them', [source(2), keyed('totals', 2)], { fromProcesses: 2, toProcesses: 4, parallelism: {} }, /no use for 4 processes/],
  ])('refuses %s, saying why', (_, stages, request, why) => {
    expect(() => planRescale(stages, () => contiguous(2), request)).toThrow(RescaleRefusedError);
    expect(() => planRescale(stages, () => contiguous(2), request)).toThrow(why);
  });
});
