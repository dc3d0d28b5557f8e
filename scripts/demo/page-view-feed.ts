import type { KafkaWriter, ProducedRecord } from '@weir/kafka';
import { seededRandom, zipfSampler } from '@weir/datagen';
import type { PageView } from '../../examples/page-views/job';

export interface FeedResult {
  readonly sent: number;
  readonly poison: number;
  /** views per user per window start, as the job should count them. */
  readonly expected: Map<string, number>;
  readonly lastTs: number;
}

const PAGES = ['/', '/pricing', '/docs', '/blog', '/signup', '/login'];

/**
 * Sends page views at a fixed rate for `durationMs`, each stamped with its scheduled time as event time (so a
 * stall shows up as latency), with Zipf-skewed users; every `poisonEvery`-th record is malformed JSON, which the
 * job must dead-letter without stopping.
 */
export async function feedPageViews(
  writer: KafkaWriter,
  topic: string,
  options: { ratePerSec: number; durationMs: number; users: number; windowMs: number; poisonEvery: number; seed: number },
): Promise<FeedResult> {
  const random = seededRandom(options.seed);
  const user = zipfSampler(options.users, 1.0, random);
  const expected = new Map<string, number>();
  const start = Date.now();
  const total = Math.floor((options.ratePerSec * options.durationMs) / 1000);
  let sent = 0;
  let poison = 0;
  let lastTs = start;
  while (sent < total) {
    // Everything due by now goes out in one batch; then sleep until the next tick.
    const due = Math.min(total, Math.floor(((Date.now() - start) * options.ratePerSec) / 1000) + 1);
    const batch: ProducedRecord[] = [];
    for (; sent < due; sent++) {
      const ts = start + Math.floor((sent * 1000) / options.ratePerSec);
      lastTs = ts;
      if (sent % options.poisonEvery === options.poisonEvery - 1) {
        batch.push({ topic, value: `{"user": "broken-${sent}", ` });
        poison++;
        continue;
      }
      const view: PageView = { user: `user-${user()}`, page: PAGES[Math.floor(random() * PAGES.length)], ts };
      const windowKey = `${view.user}@${ts - (ts % options.windowMs)}`;
      expected.set(windowKey, (expected.get(windowKey) ?? 0) + 1);
      batch.push({ topic, key: view.user, value: JSON.stringify(view), timestamp: ts });
    }
    if (batch.length > 0) await writer.send(batch);
    await new Promise((r) => setTimeout(r, 10));
  }
  return { sent, poison, expected, lastTs };
}
