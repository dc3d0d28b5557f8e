import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { WeirConfig } from '@weir/config';
import type { Pool } from '@weir/db';
import type { ConsumedRecord, KafkaReader } from '@weir/kafka';
import type { Logger } from 'pino';
import { ROOT_LOGGER, WEIR_CONFIG } from '../control-plane-options';
import { EventPublisher } from '../events/events';
import { PG_POOL } from '../infrastructure/tokens';
import type { RuleRolloutMessage } from '../graphql/models/events.model';
import { TenantDb } from '../tenancy';
import { outcomeOf, rolloutStatus } from './rollout-progress';
import type { InputPosition, RolloutAck, RolloutStatus } from './rule-set';
import { RulesKafka } from './rules-kafka';
import { RulesRepository } from './rules.repository';

/** A collector with no open rollout for this long stops reading. */
const IDLE_STOP_MS = 30_000;

/** The acknowledgement the fraud job's routing subtasks emit (examples/fraud-detection/messages.ts RuleAck). */
interface JobAck {
  readonly type?: string;
  readonly outcome?: string;
  readonly ruleId?: string;
  readonly problems?: readonly string[];
  readonly jobId?: string;
  readonly operatorId?: string;
  readonly subtask?: number;
  readonly parallelism?: number;
  readonly ts?: number;
  readonly appliedAt?: number;
  readonly inputPosition?: Record<string, unknown>;
}

interface Watch {
  readonly tenantId: string;
  readonly deploymentId: string;
  readonly acksTopic: string;
  reader: KafkaReader | null;
  idleSince: number | null;
  stopped: boolean;
}

/**
 * Reads a deployment's acks topic while it has a rollout in progress and records each ack against its rollout in
 * Postgres (the ack's `ts` is the rollout's record timestamp), then publishes progress on the `rollouts` channel and
 * finishes the rollout once every subtask acknowledged. It reads from the earliest ack each time it starts, so a
 * control-plane restart loses nothing (duplicates are ignored by the table's key); any instance can collect, and
 * every instance resumes the rollouts of its installation still in progress when it starts.
 */
@Injectable()
export class RuleAcksCollector implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly watches = new Map<string, Watch>();

  constructor(
    private readonly kafka: RulesKafka,
    private readonly db: TenantDb,
    private readonly repo: RulesRepository,
    private readonly events: EventPublisher,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(WEIR_CONFIG) private readonly config: WeirConfig,
  ) {}

  /** Resumes collecting for every rollout in progress (the instance that was collecting may be gone). */
  onApplicationBootstrap(): void {
    void this.repo.openRolloutsOfInstallation(this.pool, this.config.WEIR_QUEUE_PREFIX).then(
      (open) => {
        for (const o of open) this.watch(o.tenantId, o.deploymentId, o.acksTopic);
      },
      (err: Error) => this.logger.warn({ err: { name: err.name, message: err.message } }, 'could not resume rule rollouts in progress'),
    );
  }

  /** Makes sure this instance collects the deployment's acks (idempotent). */
  watch(tenantId: string, deploymentId: string, acksTopic: string): void {
    const existing = this.watches.get(deploymentId);
    if (existing && !existing.stopped) {
      existing.idleSince = null;
      return;
    }
    const w: Watch = { tenantId, deploymentId, acksTopic, reader: null, idleSince: null, stopped: false };
    this.watches.set(deploymentId, w);
    void this.loop(w).catch((err: Error) => {
      this.logger.warn({ err: { name: err.name, message: err.message }, deploymentId }, 'rule acks collector stopped');
    }).finally(() => {
      w.stopped = true;
      if (this.watches.get(deploymentId) === w) this.watches.delete(deploymentId);
    });
  }

  private async loop(w: Watch): Promise<void> {
    const partitions = await this.kafka.partitionCount(w.acksTopic);
    w.reader = this.kafka.connector.reader({
      readerId: `control-plane-acks-${w.deploymentId}`,
      assignments: Array.from({ length: partitions }, (_, partition) => ({ topic: w.acksTopic, partition, offset: 'earliest' as const })),
    });
    await w.reader.start();
    try {
      while (!w.stopped) {
        const records = await w.reader.poll(2_000, 250);
        if (records.length) await this.record(w, records);
        if (await this.idle(w)) break;
      }
    } finally {
      await w.reader.close().catch(() => undefined);
    }
  }

  /** True once no rollout of the deployment has been open for IDLE_STOP_MS. */
  private async idle(w: Watch): Promise<boolean> {
    const open = await this.db.readWith(w.tenantId, (c) => this.repo.openRollouts(c, w.deploymentId));
    if (open.length) {
      w.idleSince = null;
      return false;
    }
    w.idleSince ??= Date.now();
    return Date.now() - w.idleSince > IDLE_STOP_MS;
  }

  private async record(w: Watch, records: readonly ConsumedRecord[]): Promise<void> {
    const byTs = new Map<number, RolloutAck[]>();
    for (const r of records) {
      const ack = parseAck(r);
      if (!ack || ack.jobId !== w.deploymentId || ack.ruleId === undefined) continue;
      const list = byTs.get(ack.ts!) ?? [];
      list.push({
        operatorId: ack.operatorId!, subtask: ack.subtask!, parallelism: ack.parallelism!, ruleId: ack.ruleId,
        outcome: ack.outcome as RolloutAck['outcome'], problems: ack.problems ?? null, acksOffset: `${r.partition}:${r.offset}`,
        // The ack record's own timestamp is its event time (the rules record's): when the subtask applied it is
        // appliedAt, else (older jobs) the time this collector read it.
        ackedAt: new Date(typeof ack.appliedAt === 'number' && Number.isFinite(ack.appliedAt) ? ack.appliedAt : Date.now()), inputPosition: positionOf(ack.inputPosition),
      });
      byTs.set(ack.ts!, list);
    }
    if (byTs.size === 0) return;
    const progress = await this.db.run(w.tenantId, async (client) => {
      const rollouts = await this.repo.rolloutsByTs(client, w.deploymentId, [...byTs.keys()]);
      const out: RolloutStatus[] = [];
      for (const rollout of rollouts) {
        await this.repo.insertAcks(client, w.tenantId, rollout.id, byTs.get(rollout.publishTs)!);
        if (rollout.phase !== 'ROLLING_OUT') continue;
        let status = rolloutStatus(rollout, await this.repo.acks(client, rollout.id));
        const outcome = outcomeOf(status);
        if (outcome && (await this.repo.finish(client, rollout.id, outcome.phase, outcome.message))) {
          status = { ...status, phase: outcome.phase, message: outcome.message };
        }
        out.push(status);
      }
      return out;
    });
    for (const status of progress) await this.events.publish('rollouts', w.tenantId, w.deploymentId, progressMessage(status));
  }

  async onApplicationShutdown(): Promise<void> {
    for (const w of this.watches.values()) w.stopped = true;
    await Promise.all([...this.watches.values()].map((w) => w.reader?.close().catch(() => undefined)));
  }
}

/** What the `ruleRollouts` subscription pushes; `ruleSetId` carries the rollout id. */
export function progressMessage(s: RolloutStatus): RuleRolloutMessage {
  return {
    deploymentId: s.deploymentId,
    ruleSetId: s.id,
    version: s.version,
    phase: s.kind === 'SHADOW' && s.phase === 'ACTIVE' ? 'SHADOW' : s.phase,
    acknowledgedSubtasks: s.acknowledgedSubtasks,
    totalSubtasks: s.totalSubtasks ?? 0,
    message: s.message,
    at: Date.now(),
    subtasks: s.subtasks.map(({ operatorId, subtask, appliedVersion, inputPosition }) => ({ operatorId, subtask, appliedVersion, inputPosition })),
  };
}

function parseAck(r: ConsumedRecord): JobAck | null {
  try {
    const v = JSON.parse(r.value?.toString() ?? 'null') as JobAck | null;
    const ok = v && v.type === 'ack' && typeof v.ts === 'number' && typeof v.subtask === 'number' && typeof v.parallelism === 'number'
      && typeof v.operatorId === 'string' && ['applied', 'deleted', 'rejected'].includes(v.outcome ?? '');
    return ok ? v : null;
  } catch {
    return null;
  }
}

/** `{ "topic:partition": "offset" }` with decimal offsets, else null (a job that reports no position, or garbage). */
function positionOf(value: unknown): InputPosition | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const entries = Object.entries(value as Record<string, unknown>);
  return entries.every(([, v]) => typeof v === 'string' && /^\d{1,20}$/.test(v)) ? (Object.fromEntries(entries) as InputPosition) : null;
}
