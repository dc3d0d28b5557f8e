import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { WeirConfig } from '@weir/config';
import { sourceBacklogOf, type SubtaskMetricsSnapshot } from '@weir/metrics';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { ROOT_LOGGER, WEIR_CONFIG } from '../control-plane-options';
import { closeRedis } from '../events/events';
import { jobMember, MetricsKeys, minuteMember, minuteStart, MINUTE_MS, parseJobMember } from './metrics-keys';

/** Minute histograms are kept at most this long if nobody closes them (every instance down, say). */
const MINUTE_TTL_MS = 60 * 60_000;

/**
 * Keeps, per field, only the snapshot with the latest toMs: heartbeats of one worker may be handled out of order
 * by several instances at once. ARGV: ttlMs, then (field, toMs, value) triples.
 */
const UPSERT_LATEST = `
local updated = 0
for i = 2, #ARGV, 3 do
  local current = redis.call('HGET', KEYS[1], ARGV[i])
  local currentTo = current and tonumber(string.match(current, '^(%d+)|')) or nil
  if not currentTo or currentTo < tonumber(ARGV[i + 1]) then
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 2])
    updated = updated + 1
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return updated
`;

interface StoredSnapshot {
  readonly receivedAt: number;
  readonly snapshot: SubtaskMetricsSnapshot;
}

/**
 * The metrics path's state in Redis, shared by every control-plane instance (a worker's heartbeats reach any one
 * of them): each subtask's latest snapshot, the jobs with unpublished snapshots, and per job and minute the
 * event-time histograms the SLO minutes are merged from. All writes of one heartbeat go in one pipeline.
 */
@Injectable()
export class MetricsStore implements OnApplicationShutdown {
  readonly keys: MetricsKeys;
  readonly redis: Redis;

  constructor(@Inject(WEIR_CONFIG) config: WeirConfig, @Inject(ROOT_LOGGER) logger: Logger) {
    this.keys = new MetricsKeys(config.WEIR_QUEUE_PREFIX);
    this.redis = new Redis(config.WEIR_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 2, connectionName: 'weir-control-plane-metrics' });
    this.redis.on('error', (err: Error) => logger.debug({ err: { name: err.name, message: err.message } }, 'metrics Redis error'));
  }

  async onApplicationShutdown(): Promise<void> {
    await closeRedis(this.redis);
  }

  /** Records one heartbeat's snapshots; `staleAfterMs` bounds how long a silent subtask's snapshot is kept. */
  async record(snapshots: readonly SubtaskMetricsSnapshot[], receivedAt: number, staleAfterMs: number): Promise<void> {
    const byJob = new Map<string, SubtaskMetricsSnapshot[]>();
    for (const snapshot of snapshots) {
      const member = jobMember(snapshot.tenantId, snapshot.jobId);
      const list = byJob.get(member);
      if (list) list.push(snapshot);
      else byJob.set(member, [snapshot]);
    }
    const pipeline = this.redis.pipeline();
    for (const [member, list] of byJob) {
      const { tenantId, jobId } = list[0];
      const args: (string | number)[] = [staleAfterMs];
      for (const s of list) args.push(`${s.operatorId}:${s.subtask}`, s.toMs, `${s.toMs}|${receivedAt}|${JSON.stringify(s)}`);
      pipeline.eval(UPSERT_LATEST, 1, this.keys.snapshots(tenantId, jobId), ...args);
      pipeline.sadd(this.keys.dirty, member);
      pipeline.zadd(this.keys.jobs, receivedAt, member);
      for (const s of list) {
        // A snapshot belongs to the minute its interval ends in; the same snapshot in two heartbeats counts once.
        const minute = minuteStart(s.toMs);
        const key = this.keys.minute(tenantId, jobId, minute);
        pipeline.hsetnx(key, `${s.operatorId}:${s.subtask}:${s.toMs}`, s.eventTimeLatency);
        pipeline.pexpire(key, MINUTE_TTL_MS);
        pipeline.zadd(this.keys.pendingMinutes, 'NX', minute + MINUTE_MS, minuteMember(tenantId, jobId, minute));
      }
    }
    const results = await pipeline.exec();
    const failed = results?.find(([err]) => err);
    if (failed) throw failed[0] as Error;
  }

  /** Takes up to `count` jobs with unpublished snapshots; each is handed to exactly one caller (SPOP). */
  async takeDirty(count: number): Promise<{ tenantId: string; jobId: string }[]> {
    const members = await this.redis.spop(this.keys.dirty, count);
    return members.map(parseJobMember).filter((job) => job !== undefined);
  }

  /** The fresh snapshots of each job; stale ones (no update for staleAfterMs) are deleted on the way. */
  async latestSnapshots(
    jobs: readonly { tenantId: string; jobId: string }[],
    now: number,
    staleAfterMs: number,
  ): Promise<SubtaskMetricsSnapshot[][]> {
    if (jobs.length === 0) return [];
    const read = this.redis.pipeline();
    for (const { tenantId, jobId } of jobs) read.hgetall(this.keys.snapshots(tenantId, jobId));
    const results = (await read.exec()) ?? [];
    const cleanup = this.redis.pipeline();
    let stale = 0;
    const out = jobs.map(({ tenantId, jobId }, i) => {
      const [err, hash] = results[i] ?? [];
      if (err) throw err;
      const fresh: SubtaskMetricsSnapshot[] = [];
      for (const [field, value] of Object.entries((hash ?? {}) as Record<string, string>)) {
        const stored = parseStored(value);
        if (stored && now - stored.receivedAt <= staleAfterMs) fresh.push(stored.snapshot);
        else {
          cleanup.hdel(this.keys.snapshots(tenantId, jobId), field);
          stale++;
        }
      }
      return fresh;
    });
    if (stale) await cleanup.exec();
    return out;
  }

  /** Jobs heard from within staleAfterMs (older entries are dropped from the index). */
  async activeJobs(now: number, staleAfterMs: number): Promise<{ tenantId: string; jobId: string }[]> {
    await this.redis.zremrangebyscore(this.keys.jobs, '-inf', now - staleAfterMs - 1);
    const members = await this.redis.zrangebyscore(this.keys.jobs, now - staleAfterMs, '+inf');
    return members.map(parseJobMember).filter((job) => job !== undefined);
  }

  async saveLatest(tenantId: string, jobId: string, json: string, ttlMs: number): Promise<void> {
    await this.redis.set(this.keys.latest(tenantId, jobId), json, 'PX', ttlMs);
  }

  async readLatest(tenantId: string, jobId: string): Promise<string | null> {
    return this.redis.get(this.keys.latest(tenantId, jobId));
  }

  /** readLatest of each job, in one MGET: null where a job has none. */
  async readLatestOf(tenantId: string, jobIds: readonly string[]): Promise<(string | null)[]> {
    if (jobIds.length === 0) return [];
    return this.redis.mget(jobIds.map((jobId) => this.keys.latest(tenantId, jobId)));
  }
}

function parseStored(value: string): StoredSnapshot | undefined {
  const first = value.indexOf('|');
  const second = value.indexOf('|', first + 1);
  if (first < 0 || second < 0) return undefined;
  const receivedAt = Number(value.slice(first + 1, second));
  try {
    const snapshot = JSON.parse(value.slice(second + 1)) as SubtaskMetricsSnapshot;
    // Stored by a control plane from before the source backlog: it reported none.
    return { receivedAt, snapshot: { ...snapshot, sourceBacklog: sourceBacklogOf(snapshot) } };
  } catch {
    return undefined;
  }
}
