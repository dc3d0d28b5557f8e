import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { LatencyRecorder } from '@weir/metrics';
import type { Logger } from 'pino';
import { CONTROL_PLANE_OPTIONS, ROOT_LOGGER, type ControlPlaneOptions } from '../control-plane-options';
import { EventPublisher } from '../graphql/events';
import { MINUTE_MS, parseMinuteMember } from '../metrics/metrics-keys';
import { MetricsStore } from '../metrics/metrics-store';
import type { SloMinute, SloStatusMessage } from './slo';
import { evaluateSlo, transitionEvent } from './slo-math';
import { SlosRepository } from './slos.repository';

const CLOSE_EVERY_MS = 5_000;
/** Minutes closed per round. */
const BATCH = 100;
const FOREIGN_KEY_VIOLATION = '23503';

/**
 * Closes minutes: once a minute has ended (plus a grace for the last heartbeats carrying it), merges the minute's
 * event-time histograms of a deployment into its slo_minutes row, then evaluates the deployment's SLOs at that
 * minute, records a breach or recovery as an event and pushes the status on the `slo` channel. Every instance runs
 * it; ZREM decides which instance closes a minute, so each is closed once.
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
    const { redis, keys } = this.store;
    const due = await redis.zrangebyscore(keys.pendingMinutes, '-inf', now - this.graceMs, 'LIMIT', 0, BATCH);
    let closed = 0;
    for (const member of due) {
      if ((await redis.zrem(keys.pendingMinutes, member)) !== 1) continue; // another instance took it
      const parsed = parseMinuteMember(member);
      if (!parsed) continue;
      await this.close(parsed.tenantId, parsed.jobId, parsed.minuteStartMs).catch((err: Error) => {
        const fields = { err: { name: err.name, message: err.message }, tenantId: parsed.tenantId, deploymentId: parsed.jobId };
        // A job whose tenant does not exist (deleted since, or a worker misreporting): nothing to record it for.
        if ((err as { code?: unknown }).code === FOREIGN_KEY_VIOLATION) this.logger.debug(fields, 'SLO minute of an unknown tenant dropped');
        else this.logger.warn(fields, 'closing an SLO minute failed');
      });
      closed++;
    }
    return closed;
  }

  private async close(tenantId: string, deploymentId: string, minuteStartMs: number): Promise<void> {
    const { redis, keys } = this.store;
    const key = keys.minute(tenantId, deploymentId, minuteStartMs);
    const [[, histograms]] = (await redis.multi().hgetall(key).del(key).exec()) as [[Error | null, Record<string, string>]];
    const encoded = Object.values(histograms ?? {});
    if (encoded.length === 0) return;
    const summary = LatencyRecorder.summarize(encoded);
    const minute: SloMinute = { minute: minuteStartMs, samples: summary.count, p50: summary.p50, p95: summary.p95, p99: summary.p99, p999: summary.p999, max: summary.max };
    const messages = await this.slos.run(tenantId, async (client) => {
      if (!(await this.slos.insertMinute(client, tenantId, deploymentId, minute))) {
        this.logger.info({ tenantId, deploymentId, minute: new Date(minuteStartMs).toISOString() }, 'late snapshots for a closed minute left out');
        return [];
      }
      await this.slos.pruneMinutes(client, deploymentId);
      const slos = await this.slos.lockSlosOf(client, deploymentId);
      const out: SloStatusMessage[] = [];
      for (const slo of slos) {
        // Minutes close in order per deployment except after an outage; never let an older one overwrite a newer one.
        if (slo.status.minute !== null && slo.status.minute >= minuteStartMs) continue;
        const minutes = await this.slos.minutes(client, deploymentId, minuteStartMs - slo.windowMinutes * MINUTE_MS, minuteStartMs);
        const evaluation = evaluateSlo(slo, minutes, minuteStartMs);
        await this.slos.saveEvaluation(client, slo.id, evaluation);
        const event = transitionEvent(slo.status.state, evaluation.state);
        if (event) {
          const reason =
            event === 'BREACH'
              ? `compliance ${pct(evaluation.compliance)} fell below the target ${pct(slo.target)}: ${slo.percentile} event-time latency exceeded ${slo.thresholdMs} ms in ${evaluation.badMinutes} of ${evaluation.goodMinutes + evaluation.badMinutes} minutes`
              : `compliance ${pct(evaluation.compliance)} is back at or above the target ${pct(slo.target)}`;
          await this.slos.insertEvent(client, tenantId, slo.id, event, evaluation, reason);
          this.logger.info({ tenantId, sloId: slo.id, deploymentId, event, compliance: evaluation.compliance }, 'SLO state changed');
        }
        out.push({ ...evaluation, sloId: slo.id, deploymentId, event, at: Date.now() });
      }
      return out;
    });
    await Promise.all(messages.map((m) => this.events.publish('slo', tenantId, m.sloId, m)));
  }
}

function pct(value: number | null): string {
  return value === null ? 'n/a' : `${(value * 100).toFixed(2)}%`;
}
