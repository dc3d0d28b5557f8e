/**
 * Tenants' own Kafka identities on the real broker (scripts/services/kafka.sh: SASL/SCRAM and ACLs on the job hosts'
 * listener): a tenant's job host credentials reach its own topics, internal topics, groups and transactional ids,
 * and nothing of another tenant's, even one whose id starts with the first one's.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobClientId, tenantInternalTopicPrefix } from '@weir/engine';
import { createKafkaConnector, KafkaAccessDeniedError, type KafkaAdmin, type KafkaConnector } from '@weir/kafka';
import { TenantKafkaAccess, type TenantKafkaIdentity } from '../../apps/worker/src/kafka-access/tenant-kafka-access';
import { tenantKafkaSecret } from '../../apps/worker/src/kafka-access/tenant-kafka-secret';
import { deleteQueues, testConfig, uniquePrefix } from '../control-plane/support/control-plane';

const run = randomBytes(4).toString('hex');
const ACME = `acme${run}`;
// Its id starts with ACME's: prefixes must not let one reach the other's.
const ACME_EU = `${ACME}-eu`;
const config = testConfig();

function asTenant(identity: TenantKafkaIdentity, name: string): KafkaConnector {
  return createKafkaConnector({ brokers: identity.brokers, clientId: `weir-test-${name}`, sasl: identity.credentials, logLevel: 'error' });
}

describe("a tenant's Kafka credentials (SASL/SCRAM, ACLs, real broker)", () => {
  let platform: KafkaConnector;
  let admin: KafkaAdmin;
  let access: TenantKafkaAccess;
  let acme: KafkaConnector;
  const topics = {
    acmeIn: `t.${ACME}.in`,
    acmeOut: `t.${ACME}.out`,
    euIn: `t.${ACME_EU}.in`,
    euExchange: `${tenantInternalTopicPrefix(ACME_EU)}job.op.exchange`,
  };

  beforeAll(async () => {
    platform = createKafkaConnector({ brokers: config.WEIR_KAFKA_BROKERS, clientId: 'weir-test-platform' });
    admin = platform.admin();
    await admin.ensureTopics(Object.values(topics).map((topic) => ({ topic, partitions: 1 })));
    const writer = platform.writer({ writerId: 'weir-test-platform-writer' });
    await writer.start();
    await writer.send(Object.values(topics).map((topic) => ({ topic, value: `secret of ${topic}` })));
    await writer.close();
    access = new TenantKafkaAccess(platform.admin(), config.WEIR_KAFKA_TENANT_BROKERS!, async () => 'a-test-secret-of-thirty-two-characters!');
    acme = asTenant(await access.forTenant(ACME), 'acme');
    await access.forTenant(ACME_EU);
  });

  afterAll(async () => {
    await admin?.deleteTopics(Object.values(topics));
    await admin?.close();
    await access?.close();
  });

  it("reads and writes its own topics, in transactions on its own transactional ids", async () => {
    const reader = acme.reader({ readerId: jobClientId(ACME, 'job', 'in-0'), assignments: [{ topic: topics.acmeIn, partition: 0, offset: 'earliest' }] });
    await reader.start();
    const read = [];
    for (let i = 0; i < 50 && read.length === 0; i++) read.push(...(await reader.poll(10, 200)));
    await reader.close();
    expect(read.map((r) => r.value?.toString())).toEqual([`secret of ${topics.acmeIn}`]);

    const writer = acme.writer({ writerId: jobClientId(ACME, 'job', 'out-0'), transactionalId: jobClientId(ACME, 'job', 'out-0-tx') });
    await writer.start();
    const tx = await writer.transaction();
    await tx.send([{ topic: topics.acmeOut, value: 'result' }]);
    await tx.commit();
    await writer.close();
    const check = platform.reader({ readerId: 'weir-test-check', assignments: [{ topic: topics.acmeOut, partition: 0, offset: 'earliest' }] });
    await check.start();
    const written = [];
    for (let i = 0; i < 50 && written.length < 2; i++) written.push(...(await check.poll(10, 200)));
    await check.close();
    expect(written.map((r) => r.value?.toString())).toEqual([`secret of ${topics.acmeOut}`, 'result']);
  });

  it("cannot read, write or even see another tenant's topics, nor use its transactional ids", async () => {
    const listed = await acme.admin().listTopics();
    expect(listed).toEqual(expect.arrayContaining([topics.acmeIn, topics.acmeOut]));
    expect(listed.filter((t) => t.includes(ACME_EU))).toEqual([]);

    for (const topic of [topics.euIn, topics.euExchange]) {
      const reader = acme.reader({ readerId: jobClientId(ACME, 'job', `steal-${topic}`), assignments: [{ topic, partition: 0, offset: 'earliest' }] });
      // The broker hides a topic the principal may not describe: to this tenant it does not exist.
      await expect(reader.start()).rejects.toThrow(/does not exist|refused access/);
      await reader.close().catch(() => undefined);
    }

    const writer = acme.writer({ writerId: jobClientId(ACME, 'job', 'steal-writer') });
    await writer.start();
    await expect(writer.send([{ topic: topics.euIn, value: 'forged' }])).rejects.toBeInstanceOf(KafkaAccessDeniedError);
    await writer.close();

    const fencer = acme.writer({ writerId: jobClientId(ACME, 'job', 'fencer'), transactionalId: jobClientId(ACME_EU, 'job', 'out-0-tx') });
    // The broker refuses its coordinator for the id (kafkajs reports that as "failed to find group coordinator").
    await expect(fencer.start().then(() => fencer.transaction())).rejects.toThrow(/transaction of weir\./);
    await fencer.close().catch(() => undefined);
    // The same id is the other tenant's to use: the refusal above is the ACL's.
    const owner = asTenant(await access.forTenant(ACME_EU), 'acme-eu').writer({ writerId: jobClientId(ACME_EU, 'job', 'out-0'), transactionalId: jobClientId(ACME_EU, 'job', 'out-0-tx') });
    await owner.start();
    await (await owner.transaction()).abort();
    await owner.close();

    // Nothing was written to the other tenant's topic.
    expect((await admin.offsets(topics.euIn))[0]!.latest).toBe('1');
  });

  it('is refused with a wrong password, and cannot connect unauthenticated', async () => {
    const identity = await access.forTenant(ACME);
    const wrong = asTenant({ ...identity, credentials: { ...identity.credentials, password: 'guessed' } }, 'wrong');
    await expect(wrong.admin().listTopics()).rejects.toBeInstanceOf(KafkaAccessDeniedError);
    const anonymous = createKafkaConnector({ brokers: identity.brokers, clientId: 'weir-test-anonymous', logLevel: 'error' });
    await expect(anonymous.admin().listTopics()).rejects.toThrow();
  });
});

describe('the secret tenant passwords are derived from (real Redis)', () => {
  it('is one random secret for every worker of a platform, made by whichever asks first; the variable wins', async () => {
    const prefix = uniquePrefix();
    const of = { WEIR_REDIS_URL: config.WEIR_REDIS_URL, WEIR_QUEUE_PREFIX: prefix, WEIR_KAFKA_TENANT_SECRET: undefined };
    const [a, b] = await Promise.all([tenantKafkaSecret(of), tenantKafkaSecret(of)]);
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(b).toBe(a);
    const other = uniquePrefix();
    expect(await tenantKafkaSecret({ ...of, WEIR_QUEUE_PREFIX: other })).not.toBe(a);
    expect(await tenantKafkaSecret({ ...of, WEIR_KAFKA_TENANT_SECRET: 's'.repeat(32) })).toBe('s'.repeat(32));
    for (const p of [prefix, other]) await deleteQueues({ ...config, WEIR_QUEUE_PREFIX: p });
  });
});
