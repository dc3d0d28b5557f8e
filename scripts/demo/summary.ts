/** The demo's printed summary. */
import type { LatencyRecorder } from '@weir/metrics';
import type { Alert } from '../../examples/fraud-detection';
import type { RuleChange, SentTransaction, Verification } from './verify-alerts';

export interface DemoOutcome {
  readonly sent: readonly SentTransaction[];
  readonly alerts: readonly Alert[];
  readonly latency: LatencyRecorder;
  readonly verdict: Verification;
  readonly changes: readonly RuleChange[];
  readonly swap: { readonly afterSent: number; readonly tookMs: number; readonly sentMeanwhile: number };
  readonly feedSeconds: number;
  readonly maxBehindMs: number;
  readonly wallSeconds: number;
}

const top = (counts: Map<string, number>, n: number) =>
  [...counts].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, c]) => `${k} ${c}`).join(', ');

function countBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, number> {
  const out = new Map<string, number>();
  for (const item of items) out.set(keyOf(item), (out.get(keyOf(item)) ?? 0) + 1);
  return out;
}

export function printSummary(o: DemoOutcome): void {
  const lat = o.latency.summary();
  const perVersion = countBy(o.alerts, (a) => `${a.ruleId} v${a.ruleVersion}`);
  const rules = o.changes.map(({ v1, v2 }) => `${v1.ruleId}: v1 ${perVersion.get(`${v1.ruleId} v1`) ?? 0} · v2 ${perVersion.get(`${v2.ruleId} v2`) ?? 0}`);
  const points = [...o.verdict.switchPoints].map(([ruleId, p]) => `${ruleId} ${p.fromAcks ? `${p.fromAcks} from the acks' input positions` : ''}${p.fromAcks && p.inferred ? ', ' : ''}${p.inferred ? `${p.inferred} inferred` : ''}`);
  const limits = o.changes.map(({ v1, v2 }) => `${v1.ruleId} ${v1.function} ${v1.comparison} ${v1.limit} → ${v2.limit}`).join('; ');
  const line = (label: string, text: string) => console.log(`  ${label.padEnd(22)}${text}`);
  console.log('\n  Weir demo: fraud detection, rules changed live');
  console.log('  ----------------------------------------------');
  line('transactions', `${o.sent.length} in ${o.feedSeconds.toFixed(1)} s (${(o.sent.length / o.feedSeconds).toFixed(0)}/s), producer at most ${o.maxBehindMs} ms behind schedule`);
  line('rule change', limits);
  line('swap', `v2 published after ${o.swap.afterSent} transactions; every routing subtask applied it ${o.swap.tookMs} ms later (API call → rollout ACTIVE; ${o.swap.sentMeanwhile} sent meanwhile)`);
  line('alerts', `${o.alerts.length}: ${rules.join('; ')}`);
  line('switch per channel', points.join('; '));
  line('exact vs reference', o.verdict.ok ? `yes: ${o.verdict.expected} expected = ${o.alerts.length} read, each once, naming rule id + version, same key and aggregate` : `NO: ${o.verdict.problems.length} problems (below)`);
  line('event-time latency', `p50 ${lat.p50.toFixed(0)} ms  p99 ${lat.p99.toFixed(0)} ms  max ${lat.max.toFixed(0)} ms (transaction time → alert read from Kafka; includes the 200 ms out-of-orderness bound)`);
  line('busiest merchants', top(countBy(o.sent, (s) => s.tx.merchant), 3));
  line('busiest payers', top(countBy(o.sent, (s) => s.tx.payer), 3));
  line('most alerted keys', top(countBy(o.alerts, (a) => `${a.ruleId} ${a.key}`), 3));
  line('wall time', `${o.wallSeconds.toFixed(1)} s, start to summary`);
}
