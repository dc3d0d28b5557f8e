import { describe, expect, it } from 'vitest';
import { deadLetterTopic, exchangeTopic, jobClientId, runControlTopic, sinkTransactionalId } from '@weir/engine';
import { readerGroupIdPrefix } from '@weir/kafka';
import { tenantKafkaGrants, tenantKafkaPassword } from './tenant-kafka-access';

/** Whether the tenant's grants cover `name` of a resource type (prefixed ACLs: a plain startsWith). */
function covers(tenantId: string, resource: string, name: string): boolean {
  return tenantKafkaGrants(tenantId).some((g) => g.resource === resource && name.startsWith(g.prefix));
}

describe("a tenant's Kafka grants", () => {
  const names = (tenantId: string) => ({
    topic: [`t.${tenantId}.orders`, exchangeTopic(tenantId, 'job', 'score'), runControlTopic(tenantId, 'job'), deadLetterTopic(tenantId, 'job')],
    group: [`${readerGroupIdPrefix(jobClientId(tenantId, 'job', 'in-0'))}.abcd1234.1`],
    'transactional-id': [sinkTransactionalId({ tenantId, jobId: 'job', sinkId: 'out', subtask: 0 })],
  });

  it("cover every name the tenant's jobs use", () => {
    for (const [resource, list] of Object.entries(names('acme'))) for (const name of list) expect(covers('acme', resource, name), name).toBe(true);
  });

  it("cover none of another tenant's, even one whose id starts with the first one's", () => {
    for (const other of ['acme-eu', 'acme_2', 'acmeco']) {
      for (const [resource, list] of Object.entries(names(other))) for (const name of list) expect(covers('acme', resource, name), name).toBe(false);
    }
  });

  it('derive a password per tenant from the secret', () => {
    const secret = 'x'.repeat(32);
    expect(tenantKafkaPassword(secret, 'acme')).toBe(tenantKafkaPassword(secret, 'acme'));
    expect(tenantKafkaPassword(secret, 'acme')).not.toBe(tenantKafkaPassword(secret, 'acme-eu'));
    expect(tenantKafkaPassword(secret, 'acme')).not.toBe(tenantKafkaPassword('y'.repeat(32), 'acme'));
  });
});
