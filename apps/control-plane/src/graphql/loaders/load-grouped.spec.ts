import { describe, expect, it } from 'vitest';
import { loadGrouped, type DeploymentKey } from './load-grouped';
import type { PageKey } from './request-loaders';

/** A read that answers `<tenant>/<id>` for every id but `missing`, and records what it was asked. */
function recordingRead(missing: readonly string[] = []) {
  const calls: { group: DeploymentKey; ids: readonly string[] }[] = [];
  const read = async (group: DeploymentKey, ids: readonly string[]) => {
    calls.push({ group, ids });
    return new Map(ids.filter((id) => !missing.includes(id)).map((id) => [id, `${group.tenantId}/${id}`]));
  };
  return { calls, read };
}

const key = (tenantId: string, deploymentId: string): DeploymentKey => ({ tenantId, deploymentId });

describe('loadGrouped', () => {
  it('reads once per tenant, each read with only its own tenant’s ids, and answers in the order of the keys', async () => {
    const { calls, read } = recordingRead();
    const answers = await loadGrouped([key('t1', 'a'), key('t2', 'a'), key('t1', 'b'), key('t2', 'c')], read, () => 'absent');
    expect(answers).toEqual(['t1/a', 't2/a', 't1/b', 't2/c']);
    expect(calls.map((c) => [c.group.tenantId, c.ids])).toEqual([
      ['t1', ['a', 'b']],
      ['t2', ['a', 'c']],
    ]);
  });

  it('reads a deployment asked for twice once, and answers both', async () => {
    const { calls, read } = recordingRead();
    expect(await loadGrouped([key('t1', 'a'), key('t1', 'a')], read, () => 'absent')).toEqual(['t1/a', 't1/a']);
    expect(calls.map((c) => c.ids)).toEqual([['a']]);
  });

  it('answers a deployment the read leaves out with absent(key)', async () => {
    const { read } = recordingRead(['b']);
    expect(await loadGrouped([key('t1', 'a'), key('t1', 'b')], read, (k) => `none for ${k.deploymentId}`)).toEqual(['t1/a', 'none for b']);
  });

  it('splits a tenant’s keys by their arguments', async () => {
    const { calls, read } = recordingRead();
    const pages: PageKey[] = [
      { tenantId: 't1', deploymentId: 'a', limit: 2, cursor: undefined },
      { tenantId: 't1', deploymentId: 'b', limit: 2, cursor: 'x' },
      { tenantId: 't1', deploymentId: 'c', limit: 2, cursor: undefined },
      { tenantId: 't1', deploymentId: 'd', limit: 5, cursor: undefined },
    ];
    await loadGrouped(pages, read, () => 'absent', (k) => [k.limit, k.cursor ?? null]);
    expect(calls.map((c) => [(c.group as PageKey).limit, (c.group as PageKey).cursor, c.ids])).toEqual([
      [2, undefined, ['a', 'c']],
      [2, 'x', ['b']],
      [5, undefined, ['d']],
    ]);
  });

  it('fails only the keys of a group whose read fails', async () => {
    const down = new Error('t2 is unreachable');
    const read = async (group: DeploymentKey, ids: readonly string[]) => {
      if (group.tenantId === 't2') throw down;
      return new Map(ids.map((id) => [id, id]));
    };
    expect(await loadGrouped([key('t1', 'a'), key('t2', 'b'), key('t1', 'c')], read, () => 'absent')).toEqual(['a', down, 'c']);
  });
});
