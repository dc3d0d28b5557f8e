/**
 * The totals job (a keyed running count/sum, test/chaos/support.ts) deployed on a test platform with an exactly-once
 * sink: its bundle, its deployment, its input fed in steps, and the check that the committed output equals an
 * uninterrupted run's, record by record (lost or repeated state shows as wrong totals).
 */
import { keyGroupOfKey } from '@weir/engine';
import { expect } from 'vitest';
import { buildJob, insertBundle } from '../control-plane/deployments/support';
import { expectedOutput, inputRecords, KEYS, type Output, readAll, sortOutputs, TOTALS_OPERATORS, totalsJobSource } from '../chaos/support';
import type { Platform } from '../support/platform';

export interface TotalsFlow {
  /** Input records sent so far. */
  readonly sent: number;
  /** Builds the totals job on the platform's topics and stores it as bundle `totals` `version`; returns its id. */
  bundle(version?: string): Promise<string>;
  /** Deploys `bundleId` with parallelism 2, a checkpoint every 300 ms and the exactly-once sink; returns its id. */
  deploy(bundleId: string, name: string): Promise<string>;
  /** Sends the next `count` input records (the flow's step by default). */
  send(count?: number): Promise<void>;
  /** Reads the committed output until it holds every record sent: exactly the expected, in every total. */
  expectExactOutput(timeoutMs?: number): Promise<void>;
}

/** `partitions`: of the input topic, which the records are spread over (by key). */
export function totalsFlow(platform: Platform<'input' | 'output'>, step: number, partitions = 2): TotalsFlow {
  let sent = 0;
  return {
    get sent() {
      return sent;
    },
    async bundle(version = '1.0.0') {
      const { input, output } = platform.topics;
      const job = await buildJob(platform.home, totalsJobSource(input, output));
      return insertBundle(platform.config, platform.tenant.tenantId, job, { name: 'totals', version, operatorIds: TOTALS_OPERATORS, topics: [input, output] });
    },
    deploy(bundleId, name) {
      return platform.deploy({
        name,
        bundleId,
        parallelism: { default: 2, operators: {} },
        config: { properties: { 'checkpoint.interval-ms': '300', 'sink.delivery': 'exactly-once' } },
      });
    },
    async send(count = step) {
      const writer = platform.kafka.writer({ writerId: `totals-${platform.run}-${sent}` });
      await writer.start();
      await writer.send(inputRecords(platform.topics.input, sent, sent + count, partitions));
      await writer.close();
      sent += count;
    },
    async expectExactOutput(timeoutMs = 45_000) {
      const records = await readAll(platform.kafka, platform.topics.output, 2, (n) => n >= sent, timeoutMs);
      const outputs = sortOutputs(records.map((r) => JSON.parse(r.value!.toString()) as Output));
      expect(outputs.length, outputs.length === sent ? '' : shortfall(outputs, sent, partitions)).toBe(sent);
      expect(outputs).toEqual(expectedOutput(sent));
    },
  };
}

/** The totals job's max parallelism (chaos/support.ts totalsJobSource): where a key's key group is computed. */
const MAX_PARALLELISM = 32;

/**
 * What is missing, said so that a failure tells where to look: per key short of records, its key group, its input
 * partition and the input indexes it lacks, as ranges (a key's indexes are KEYS apart).
 */
function shortfall(outputs: readonly Output[], sent: number, partitions: number): string {
  const seen = new Set(outputs.map((o) => o.i));
  const missing = new Map<number, number[]>();
  for (let i = 0; i < sent; i++) {
    if (seen.has(i)) continue;
    const k = i % KEYS;
    if (!missing.has(k)) missing.set(k, []);
    missing.get(k)!.push(i);
  }
  const ranges = (is: number[]) => {
    const out: string[] = [];
    let start = is[0];
    for (let j = 1; j <= is.length; j++) {
      if (j < is.length && is[j] === is[j - 1] + KEYS) continue;
      out.push(start === is[j - 1] ? `${start}` : `${start}..${is[j - 1]}`);
      start = is[j];
    }
    return out.join(',');
  };
  const perKey = [...missing].map(
    ([k, is]) => `k${k} (key group ${keyGroupOfKey(`k${k}`, MAX_PARALLELISM)}, partition ${k % partitions}): ${is.length} missing, i ${ranges(is)}`,
  );
  return `${outputs.length} of ${sent} outputs; ${missing.size} keys short:\n  ${perKey.join('\n  ')}`;
}
