import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { PoolClient } from '@weir/db';
import { LatencyRecorder } from '@weir/metrics';
import type { Logger } from 'pino';
import { CONTROL_PLANE_OPTIONS, ROOT_LOGGER, type ControlPlaneOptions } from '../control-plane-options';
import { EventPublisher } from '../events/events';
import { MINUTE_MS, parseMinuteMember } from '../metrics/metrics-keys';
import { MetricsStore } from '../metrics/metrics-store';
import type { Slo, SloMinute, SloStatusMessage } from './slo';
import { evaluateSlo, transitionEvent } from './slo-math';
import { SlosRepository } from './slos.repository';

const CLOSE_EVERY_MS = 5_000;
/** Due minutes looked at per round. */
const BATCH = 500;
const FOREIGN_KEY_VIOLATION = '23503';

/**
 * Closes minutes: once a minute has ended (plus a grace for the last heartbeats carrying it), merges the minute's
 * event-time histograms of a deployment into its slo_minutes row, then evaluates the deployment's SLOs at that
 * minute, records a breach or recovery as an event and pushes the status on the `slo` channel.
 *
 * Every instance runs it. A deployment's minutes are closed in one transaction holding an advisory lock on the
 * deployment, oldest first, so that each evaluation sees every earlier minute (never one another instance is still
 * writing) and minutes are evaluated in order; ZREM under the lock makes sure each minute is closed once.
 */
@Injectable()
export class SloMinuteCloser implements OnApplicationBootstrap, OnModuleDestroy {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  /** The last snapshot ending in a minute reaches the control plane within about one heartbeat. */
  readonly graceMs: number;

  constructor(
    private readonly store: MetricsStore,
    private readonly slos: SlosRepository,
    private readonly events: EventPublisher,
    @Inject(CONTROL_PLANE_OPTIONS) options: ControlPlaneOptions,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
  ) {
    this.graceMs = 2 * options.config.WEIR_WORKER_HEARTBEAT_MS + 2_000;
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.tick(), CLOSE_EVERY_MS);
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One round; resolves to the number of minutes this instance closed. */
  tick(now = Date.now()): Promise<number> {
    this.running ??= this.closeDue(now)
      .catch((err: Error) => {
        this.logger.warn({ err: { name: err.name, message: err.message } }, 'closing SLO minutes failed');
        return 0;
      })
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  private async closeDue(now: number): Promise<number> {
    const deployments = new Map<string, { tenantId: string; deploymentId: string }>();
    for (const due of await this.dueMinutes(now)) deployments.set(`${due.tenantId}:${due.deploymentId}`, due);
    let closed = 0;
    for (const { tenantId, deploymentId } of deployments.values()) {
      closed += await this.closeDeployment(tenantId, deploymentId, now).catch((err: Error) => {
        const fields = { err: { name: err.name, message: err.message }, tenantId, deploymentId };
        // A job whose tenant does not exist (deleted since, or a worker misreporting): nothing to record it for.
        if ((err as { code?: unknown }).code === FOREIGN_KEY_VIOLATION) this.logger.debug(fields, 'SLO minutes of an unknown tenant dropped');
        else this.logger.warn(fields, 'closing SLO minutes failed');
        return 0;
      });
    }
    return closed;
  }

  /** Due minutes, oldest first. */
  private async dueMinutes(now: number): Promise<{ tenantId: string; deploymentId: string; minuteStartMs: number; member: string }[]> {
    const { redis, keys } = this.store;
    const members = await redis.zrangebyscore(keys.pendingMinutes, '-inf', now - this.graceMs, 'LIMIT', 0, BATCH);
    return members.flatMap((member) => {
      const parsed = parseMinuteMember(member);
      return parsed ? [{ tenantId: parsed.tenantId, deploymentId: parsed.jobId, minuteStartMs: parsed.minuteStartMs, member }] : [];
    });
  }

  private async closeDeployment(tenantId: string, deploymentId: string, now: number): Promise<number> {
    const { redis, keys } = this.store;
    let closed = 0;
    const messages = await this.slos.run(tenantId, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`weir-slo-minutes:${tenantId}:${deploymentId}`]);
      // Read again under the lock: another instance may have closed some of them meanwhile.
      const due = (await this.dueMinutes(now))
        .filter((m) => m.tenantId === tenantId && m.deploymentId === deploymentId)
        .sort((a, b) => a.minuteStartMs - b.minuteStartMs);
      const out: SloStatusMessage[] = [];
      for (const { minuteStartMs, member } of due) {
        if ((await redis.zrem(keys.pendingMinutes, member)) !== 1) continue;
        const key = keys.minute(tenantId, deploymentId, minuteStartMs);
        const [[, histograms]] = (await redis.multi().hgetall(key).del(key).exec()) as [[Error | null, Record<string, string>]];
        const encoded = Object.values(histograms ?? {});
        if (encoded.length === 0) continue;
        const summary = LatencyRecorder.summarize(encoded);
        const minute: SloMinute = { minute: minuteStartMs, samples: summary.count, p50: summary.p50, p95: summary.p95, p99: summary.p99, p999: summary.p999, max: summary.max };
        if (!(await this.slos.insertMinute(client, tenantId, deploymentId, minute))) {
          this.logger.info({ tenantId, deploymentId, minute: new Date(minuteStartMs).toISOString() }, 'late snapshots for a closed minute left out');
          continue;
        }
        closed++;
        out.push(...(await this.evaluate(client, tenantId, deploymentId, minuteStartMs)));
      }
      if (closed) await this.slos.pruneMinutes(client, deploymentId);
      return out;
    });
    // After the commit: subscribers never hear of a state the database does not hold.
    await Promise.all(messages.map((m) => this.events.publish('slo', tenantId, m.sloId, m)));
    return closed;
  }

  /** Evaluates every SLO of the deployment at the minute; records and returns what changed. */
  private async evaluate(client: PoolClient, tenantId: string, deploymentId: string, minuteStartMs: number): Promise<SloStatusMessage[]> {
    const out: SloStatusMessage[] = [];
    for (const slo of await this.slos.lockSlosOf(client, deploymentId)) {
      // A minute closed late (after an outage) never overwrites a newer evaluation.
      if (slo.status.minute !== null && slo.status.minute >= minuteStartMs) continue;
      const minutes = await this.slos.minutes(client, deploymentId, minuteStartMs - slo.windowMinutes * MINUTE_MS, minuteStartMs);
      const evaluation = evaluateSlo(slo, minutes, minuteStartMs);
      await this.slos.saveEvaluation(client, slo.id, evaluation);
      const event = transitionEvent(slo.status.state, evaluation.state);
      if (event) {
        await this.slos.insertEvent(client, tenantId, slo.id, event, evaluation, reasonOf(event, slo, evaluation));
        this.logger.info({ tenantId, sloId: slo.id, deploymentId, event, compliance: evaluation.compliance }, 'SLO state changed');
      }
      out.push({ ...evaluation, sloId: slo.id, deploymentId, event, at: Date.now() });
    }
    return out;
  }
}

function reasonOf(event: 'BREACH' | 'RECOVERED', slo: Slo, e: ReturnType<typeof evaluateSlo>): string {
  if (event === 'RECOVERED') return `compliance ${pct(e.compliance)} is back at or above the target ${pct(slo.target)}`;
  return (
    `compliance ${pct(e.compliance)} fell below the target ${pct(slo.target)}: ${slo.percentile} event-time latency exceeded ` +
    `${slo.thresholdMs} ms in ${e.badMinutes} of ${e.goodMinutes + e.badMinutes} minutes`
  );
}

function pct(value: number | null): string {
  return value === null ? 'n/a' : `${(value * 100).toFixed(2)}%`;
}
