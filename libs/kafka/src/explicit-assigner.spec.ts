import { AssignerProtocol, type Cluster, type Logger } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { decodeWanted, EXPLICIT_ASSIGNER_NAME, explicitAssigner } from './explicit-assigner';

const context = { cluster: {} as Cluster, groupId: 'g', logger: {} as Logger };

describe('explicitAssigner', () => {
  it('announces the wanted partitions and assigns each member exactly those', async () => {
    const mine = explicitAssigner({ orders: [2, 0], payments: [1] })(context);
    const theirs = explicitAssigner({ orders: [1] })(context);
    const topics = ['orders', 'payments'];
    const members = [
      { memberId: 'a', memberMetadata: mine.protocol({ topics }).metadata },
      { memberId: 'b', memberMetadata: theirs.protocol({ topics }).metadata },
    ];
    expect(mine.protocol({ topics }).name).toBe(EXPLICIT_ASSIGNER_NAME);

    const result = await mine.assign({ members, topics });
    const byMember = Object.fromEntries(
      result.map((r) => [r.memberId, AssignerProtocol.MemberAssignment.decode(r.memberAssignment)?.assignment]),
    );
    expect(byMember).toEqual({ a: { orders: [2, 0], payments: [1] }, b: { orders: [1] } });
  });

  it('decodes missing or malformed user data as no partitions', () => {
    expect(decodeWanted(null)).toEqual({});
    expect(decodeWanted(Buffer.from('[]'))).toEqual({});
    expect(decodeWanted(Buffer.from('{"t":[1,"x",2.5,3]}'))).toEqual({ t: [1, 3] });
  });
});
