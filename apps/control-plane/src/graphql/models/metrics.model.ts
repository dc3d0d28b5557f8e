import { Field, Float, ID, Int, ObjectType } from '@nestjs/graphql';
import type { DeploymentMetrics } from '../../metrics/deployment-metrics';
import { MaxMean } from './common.model';

@ObjectType('LatencyFigures', { description: 'Event-time latency (event timestamp to sink) over the interval, in milliseconds.' })
export class LatencyFiguresModel {
  @Field(() => Float, { description: 'Latencies recorded in the interval' }) samples!: number;
  @Field(() => Float) p50!: number;
  @Field(() => Float) p95!: number;
  @Field(() => Float) p99!: number;
  @Field(() => Float) max!: number;
}

@ObjectType('HeavyKey', { description: 'A key with a large share of the records (space-saving estimate).' })
export class HeavyKeyModel {
  @Field({ description: 'The key, printable (utf-8, or hex when not printable)' }) key!: string;
  @Field(() => Int) keyGroup!: number;
  @Field(() => Float, { description: 'Estimated records in the interval (an upper bound)' }) count!: number;
  @Field(() => Float, { description: 'How much the count may overestimate' }) error!: number;
}

@ObjectType('DeploymentMetrics', {
  description:
    "A deployment's figures merged from the latest snapshot of each of its subtasks (workers send them with their " +
    'heartbeats). Pushed at most once per second per deployment while snapshots arrive.',
})
export class DeploymentMetricsModel {
  @Field(() => ID) deploymentId!: string;
  @Field({ description: 'When the control plane merged the snapshots' }) at!: Date;
  @Field({ description: 'Start of the span the merged snapshots cover' }) from!: Date;
  @Field({ description: 'End of the span the merged snapshots cover' }) to!: Date;
  @Field(() => Int, { description: 'Subtasks whose snapshots were merged' }) subtasks!: number;
  @Field(() => Float, { description: "The job's throughput: records per second entering it at its sources (not every stage's input summed)" })
  recordsInPerSec!: number;
  @Field(() => Float, { description: "Records per second out of every stage's subtasks, summed" }) recordsOutPerSec!: number;
  @Field(() => MaxMean, { description: 'Milliseconds per second spent processing (max finds the bottleneck)' }) busyMsPerSec!: MaxMean;
  @Field(() => MaxMean, { description: 'Milliseconds per second blocked on downstream' }) backpressuredMsPerSec!: MaxMean;
  @Field(() => LatencyFiguresModel) eventTimeLatency!: LatencyFiguresModel;
  @Field(() => Float, { nullable: true, description: 'Wall clock minus the slowest watermark, ms; null before the first watermark' })
  watermarkLagMs!: number | null;
  @Field(() => [HeavyKeyModel], { description: 'The hottest keys (at most 10)' }) heavyKeys!: HeavyKeyModel[];
  @Field(() => Float, { description: 'Records sent to the dead-letter topic in the interval' }) deadLettered!: number;
  @Field(() => Float, { nullable: true, description: 'Records behind the log end over the Kafka source subtasks; null when none reports one' })
  sourceBacklog!: number | null;

  static from(m: DeploymentMetrics): DeploymentMetricsModel {
    return {
      deploymentId: m.deploymentId,
      at: new Date(m.at),
      from: new Date(m.fromMs),
      to: new Date(m.toMs),
      subtasks: m.subtasks,
      recordsInPerSec: m.recordsInPerSec,
      recordsOutPerSec: m.recordsOutPerSec,
      busyMsPerSec: m.busyMsPerSec,
      backpressuredMsPerSec: m.backpressuredMsPerSec,
      eventTimeLatency: m.eventTimeLatency,
      watermarkLagMs: m.watermarkLagMs,
      heavyKeys: [...m.heavyKeys],
      deadLettered: m.deadLettered,
      // Figures merged before the field existed (the latest, kept in Redis) have none.
      sourceBacklog: (m as Partial<DeploymentMetrics>).sourceBacklog ?? null,
    };
  }
}
