/**
 * A job host: the child process that runs one tenant's job. It is the isolation boundary between tenants (no two
 * tenants' code shares a process) and between a job's failure and the worker. It talks to its supervisor over IPC.
 */
import { join } from 'node:path';
import { loadConfig } from '@weir/config';
import { runJob, type RunningJob } from '@weir/engine';
import { createKafkaConnector } from '@weir/kafka';
import { createStateBackend } from '@weir/state';
import { loadBundle } from '../bundles/load-bundle';
import type { FromJobHost, StartJobMessage, ToJobHost } from './ipc';

const METRICS_INTERVAL_MS = 1_000;

function send(message: FromJobHost): void {
  process.send?.(message);
}

let job: RunningJob | undefined;
let metricsTimer: NodeJS.Timeout | undefined;

async function start(message: StartJobMessage): Promise<void> {
  const config = loadConfig();
  const definition = loadBundle(message.bundlePath);
  if (definition.maxParallelism !== message.maxParallelism) {
    throw new Error(`the bundle declares maxParallelism ${definition.maxParallelism}, the deployment ${message.maxParallelism}`);
  }
  const kafka = createKafkaConnector({ brokers: config.WEIR_KAFKA_BROKERS, clientId: `${config.WEIR_KAFKA_CLIENT_ID}-${message.jobId}` });
  job = await runJob(definition, {
    tenantId: message.tenantId,
    jobId: message.jobId,
    parallelism: { default: 1, ...message.parallelism },
    kafka,
    deadLetterTopic: message.deadLetterTopic,
    state: (ctx) => createStateBackend({ kind: 'lsm', path: join(message.stateDir, `${ctx.operatorId}-${ctx.subtask}`) }),
  });
  const stages = new Map<string, number>();
  for (const snapshot of job.metrics()) stages.set(snapshot.operatorId, Math.max(stages.get(snapshot.operatorId) ?? 0, snapshot.subtask + 1));
  send({ type: 'started', stages: [...stages].map(([operatorId, parallelism]) => ({ operatorId, parallelism })) });
  metricsTimer = setInterval(() => job && send({ type: 'metrics', snapshots: job.metrics() }), METRICS_INTERVAL_MS);
  job.done.then(
    () => exit({ type: 'finished' }, 0),
    (err: Error) => exit({ type: 'failed', message: err.message }, 1),
  );
}

function exit(last: FromJobHost, code: number): void {
  clearInterval(metricsTimer);
  send(last);
  // Let IPC flush before leaving.
  setTimeout(() => process.exit(code), 50);
}

process.on('message', (message: ToJobHost) => {
  if (message.type === 'start') {
    start(message).catch((err: Error) => exit({ type: 'failed', message: err.message }, 1));
  } else if (message.type === 'stop') {
    if (!job) return exit({ type: 'finished' }, 0);
    job.stop().catch((err: Error) => exit({ type: 'failed', message: `stop failed: ${err.message}` }, 1));
  }
});
// The supervisor went away: nothing may keep running unsupervised.
process.on('disconnect', () => process.exit(1));
