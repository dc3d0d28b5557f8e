import { Injectable } from '@nestjs/common';
import type { ConsumedRecord } from '@weir/kafka';
import type { Alert } from '@weir/rules';
import { RulesKafka } from './rules-kafka';

/** A shadow scan reads at most this many records and this long, so one request cannot hold the API. */
const MAX_SCANNED = 2_000_000;
const MAX_SCAN_MS = 15_000;

/** An alert a shadow version would have raised, as the API returns it (without the job's `shadow` marker). */
export type ShadowAlert = Omit<Alert, 'shadow'>;

export interface ShadowResults {
  readonly version: number;
  readonly topic: string;
  /** Alerts the version would have raised, per rule id. */
  readonly alertsByRule: Readonly<Record<string, number>>;
  readonly totalAlerts: number;
  /** Up to `limit` alerts, oldest first (per partition order). */
  readonly alerts: readonly ShadowAlert[];
  readonly scannedRecords: number;
  /** True when the scan stopped at its bounds before the end of the topic. */
  readonly truncated: boolean;
}

/**
 * What a version evaluated in shadow would have raised: read from the job's shadow-alerts topic, from its start up
 * to its end at request time (the job writes shadow alerts there instead of to its alerts; every alert names the rule
 * version). A bounded scan per request: fine for reviewing a candidate, not for a dashboard polling every second.
 */
@Injectable()
export class ShadowResultsReader {
  constructor(private readonly kafka: RulesKafka) {}

  async read(topic: string, version: number, limit: number): Promise<ShadowResults> {
    await this.kafka.ensureTopics([topic]);
    const ends = new Map((await this.kafka.offsets(topic)).map((o) => [o.partition, BigInt(o.latest)]));
    const pending = new Set([...ends].filter(([, end]) => end > 0n).map(([p]) => p));
    const byRule: Record<string, number> = {};
    const alerts: ShadowAlert[] = [];
    let total = 0;
    let scanned = 0;
    if (pending.size === 0) return { version, topic, alertsByRule: byRule, totalAlerts: 0, alerts, scannedRecords: 0, truncated: false };
    const reader = this.kafka.connector.reader({
      readerId: `control-plane-shadow-${Date.now()}`,
      assignments: [...pending].map((partition) => ({ topic, partition, offset: 'earliest' as const })),
    });
    const deadline = Date.now() + MAX_SCAN_MS;
    await reader.start();
    try {
      while (pending.size > 0 && scanned < MAX_SCANNED && Date.now() < deadline) {
        for (const r of await reader.poll(5_000, 200)) {
          if (BigInt(r.offset) >= ends.get(r.partition)!) continue;
          scanned++;
          if (BigInt(r.offset) === ends.get(r.partition)! - 1n) pending.delete(r.partition);
          const alert = parseShadowAlert(r);
          if (!alert || alert.ruleVersion !== version) continue;
          total++;
          byRule[alert.ruleId] = (byRule[alert.ruleId] ?? 0) + 1;
          if (alerts.length < limit) alerts.push(alert);
        }
        // Compaction or transaction markers can leave an end offset no record carries: positions tell.
        for (const [key, position] of reader.positions()) {
          const partition = Number(key.slice(key.lastIndexOf(':') + 1));
          if (BigInt(position) >= (ends.get(partition) ?? 0n)) pending.delete(partition);
        }
      }
    } finally {
      await reader.close().catch(() => undefined);
    }
    return { version, topic, alertsByRule: byRule, totalAlerts: total, alerts, scannedRecords: scanned, truncated: pending.size > 0 };
  }
}

function parseShadowAlert(r: ConsumedRecord): ShadowAlert | null {
  try {
    const v = JSON.parse(r.value?.toString() ?? 'null') as Alert | null;
    if (!v || typeof v.ruleId !== 'string' || typeof v.ruleVersion !== 'number') return null;
    const { shadow: _shadow, ...alert } = v;
    return alert;
  } catch {
    return null;
  }
}
