import { commitMarkerKey, commitSinkEpoch, jobClientId, sinkCommitsTopic, sinkTransactionalId, type SinkEpoch } from '@weir/engine';
import type { KafkaConnector } from '@weir/kafka';

const CATCH_UP_MS = 30_000;

export class SinkRecoveryError extends Error {
  override readonly name = 'SinkRecoveryError';
}

/**
 * Per sink subtask (`sink/subtask`), the last checkpoint whose epoch committed, read with read_committed from the
 * job's sink-commits topic. The transactional ids of `fence` are registered first, so a zombie's open transaction
 * is aborted and cannot hold the read back.
 */
export async function readCommitMarkers(kafka: KafkaConnector, tenantId: string, jobId: string): Promise<Map<string, number>> {
  const topic = sinkCommitsTopic(tenantId, jobId);
  const admin = kafka.admin();
  let latest: string;
  try {
    await admin.ensureTopics([{ topic, partitions: 1, config: { 'cleanup.policy': 'compact' } }]);
    latest = (await admin.offsets(topic)).find((o) => o.partition === 0)?.latest ?? '0';
  } finally {
    await admin.close();
  }
  const markers = new Map<string, number>();
  if (latest === '0') return markers;
  const reader = kafka.reader({ readerId: jobClientId(tenantId, jobId, 'commit-markers'), assignments: [{ topic, partition: 0, offset: 'earliest' }] });
  await reader.start();
  try {
    const deadline = Date.now() + CATCH_UP_MS;
    const key = `${topic}:0`;
    while (BigInt(reader.positions().get(key) ?? '0') < BigInt(latest)) {
      if (Date.now() > deadline) throw new SinkRecoveryError(`sink commit markers of ${tenantId}/${jobId} not readable up to offset ${latest} within ${CATCH_UP_MS / 1000} s`);
      for (const r of await reader.poll(10_000, 200)) {
        if (!r.key || !r.value) continue;
        const { checkpointId } = JSON.parse(r.value.toString('utf8')) as { checkpointId: number };
        markers.set(r.key.toString('utf8'), Math.max(markers.get(r.key.toString('utf8')) ?? 0, checkpointId));
      }
    }
  } finally {
    await reader.close();
  }
  return markers;
}

/** Fences the transactional ids of the sink subtasks in `epochs` (aborting whatever their zombies left open). */
export async function fenceSinkSubtasks(kafka: KafkaConnector, tenantId: string, jobId: string, epochs: readonly SinkEpoch[]): Promise<void> {
  for (const e of epochs) {
    const writer = kafka.writer({ writerId: jobClientId(tenantId, jobId, 'fence'), transactionalId: sinkTransactionalId({ tenantId, jobId, sinkId: e.sinkId, subtask: e.subtask }) });
    await writer.start();
    await writer.close();
  }
}

/**
 * Commits the restored checkpoint's sink epochs that did not commit before the crash (the manifest was written,
 * the transaction was not). An epoch whose marker is at or past its checkpoint committed already and is skipped.
 */
export async function commitRestoredEpochs(
  kafka: KafkaConnector,
  tenantId: string,
  jobId: string,
  epochs: readonly SinkEpoch[],
): Promise<{ committed: number; alreadyCommitted: number }> {
  if (epochs.length === 0) return { committed: 0, alreadyCommitted: 0 };
  await fenceSinkSubtasks(kafka, tenantId, jobId, epochs);
  const markers = await readCommitMarkers(kafka, tenantId, jobId);
  let committed = 0;
  let alreadyCommitted = 0;
  for (const epoch of epochs) {
    if ((markers.get(commitMarkerKey(epoch.sinkId, epoch.subtask)) ?? -1) >= epoch.checkpointId) {
      alreadyCommitted++;
      continue;
    }
    const id = { tenantId, jobId, sinkId: epoch.sinkId, subtask: epoch.subtask };
    const writer = kafka.writer({ writerId: `${sinkTransactionalId(id)}-recovery`, transactionalId: sinkTransactionalId(id) });
    await writer.start();
    try {
      const records = epoch.records.map((r) => ({ ...r, key: r.key ? Buffer.from(r.key) : null, value: Buffer.from(r.value) }));
      await commitSinkEpoch(writer, { ...epoch, records }, sinkCommitsTopic(tenantId, jobId));
      committed++;
    } finally {
      await writer.close();
    }
  }
  return { committed, alreadyCommitted };
}
