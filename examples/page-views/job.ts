/**
 * The demo job: page views per user in 1-second tumbling event-time windows.
 * Kafka `demo.page-views` (JSON) → drop malformed views → key by user → count per window → Kafka `demo.views-per-user`.
 */
import { aggregate, defineJob, json, kafkaSink, kafkaSource, tumbling } from '@weir/engine';

export interface PageView {
  readonly user: string;
  readonly page: string;
  /** Event time, epoch ms. */
  readonly ts: number;
}

export interface ViewsPerUser {
  readonly user: string;
  readonly windowStart: number;
  readonly windowEnd: number;
  readonly views: number;
}

export const PAGE_VIEWS_TOPIC = 'demo.page-views';
export const VIEWS_PER_USER_TOPIC = 'demo.views-per-user';
export const WINDOW_MS = 1_000;

const countViews = aggregate<string, PageView, number, number, ViewsPerUser>(
  { createAccumulator: () => 0, add: (_view, n) => n + 1, getResult: (n) => n, merge: (a, b) => a + b },
  (user, window, views) => ({ user, windowStart: window.start, windowEnd: window.end, views }),
);

export default defineJob({ name: 'page-views', maxParallelism: 128 }, (job) => {
  job
    .source(
      'page-views',
      kafkaSource<PageView>({
        topic: PAGE_VIEWS_TOPIC,
        format: json(),
        timestamps: (view) => view.ts,
        // No idleness timeout: every partition carries traffic, and on a stalled machine an "idle" partition would
        // let the watermark run ahead of records still in flight, turning them late.
        watermarks: { maxOutOfOrdernessMs: 200 },
      }),
    )
    .filter('valid-views', (view) => typeof view.user === 'string' && view.user.length > 0 && Number.isFinite(view.ts))
    .keyBy('by-user', (view) => view.user)
    .window('views-per-user', tumbling(WINDOW_MS), countViews)
    .sink('views-out', kafkaSink<ViewsPerUser>({ topic: VIEWS_PER_USER_TOPIC, format: json(), key: (r) => r.user }));
});
