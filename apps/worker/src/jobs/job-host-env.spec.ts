import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { jobHostEnv } from './job-host-env';
import { forkJobHost } from './job-host-forks';

describe('jobHostEnv', () => {
  const worker = {
    PATH: '/usr/bin',
    WEIR_PG_URL: 'postgres://weir_app:secret@db:5432/weir',
    WEIR_PG_OWNER_URL: 'postgres://weir_owner:secret@db:5432/weir',
    WEIR_PG_ADMIN_URL: 'postgres://postgres:secret@db:5432/postgres',
    WEIR_REDIS_URL: 'redis://:secret@cache:6379',
    WEIR_ADMIN_TOKEN: 'x'.repeat(40),
    WEIR_QUEUE_PREFIX: 'weir',
    WEIR_KAFKA_BROKERS: 'kafka:9092',
    WEIR_S3_BUCKET: 'weir',
    WEIR_S3_ACCESS_KEY_ID: 'AKIA-worker',
    WEIR_S3_SECRET_ACCESS_KEY: 'secret',
    AWS_SECRET_ACCESS_KEY: 'secret',
    AWS_REGION: 'eu-west-1',
    SOME_OTHER_SECRET: 'secret',
  };

  it('keeps what the job host needs for Kafka, the bucket name and Node', () => {
    expect(jobHostEnv(worker)).toEqual({ PATH: '/usr/bin', WEIR_KAFKA_BROKERS: 'kafka:9092', WEIR_S3_BUCKET: 'weir' });
  });

  it('leaves out the database, Redis, the admin token, the S3 and AWS credentials and anything it does not know', () => {
    const kept = Object.keys(jobHostEnv(worker));
    for (const name of ['WEIR_PG_URL', 'WEIR_PG_OWNER_URL', 'WEIR_PG_ADMIN_URL', 'WEIR_REDIS_URL', 'WEIR_ADMIN_TOKEN', 'WEIR_QUEUE_PREFIX', 'SOME_OTHER_SECRET', 'WEIR_S3_ACCESS_KEY_ID', 'WEIR_S3_SECRET_ACCESS_KEY', 'AWS_SECRET_ACCESS_KEY', 'AWS_REGION']) {
      expect(kept).not.toContain(name);
    }
  });
});

describe('forkJobHost', () => {
  it("forks a job host whose environment lacks the worker's secrets", async () => {
    const saved = { ...process.env };
    process.env.WEIR_PG_URL = 'postgres://weir_app:fork-secret@db:5432/weir';
    process.env.WEIR_ADMIN_TOKEN = 'fork-secret'.repeat(4);
    process.env.WEIR_KAFKA_BROKERS = '127.0.0.1:9092';
    const { child } = forkJobHost();
    try {
      // What the child process was started with, as the kernel holds it: what tenant code would see in process.env.
      const environ = (await readFile(`/proc/${child.pid}/environ`, 'utf8')).split('\0');
      expect(environ).toContain('WEIR_KAFKA_BROKERS=127.0.0.1:9092');
      expect(environ.join('\n')).not.toContain('fork-secret');
    } finally {
      child.kill('SIGKILL');
      process.env = saved;
    }
  });
});

describe('the job host permission model', () => {
  it('refuses child processes and worker threads, allows files and addons', async () => {
    const { child } = forkJobHost();
    try {
      const cmdline = (await readFile(`/proc/${child.pid}/cmdline`, 'utf8')).split('\0');
      expect(cmdline).toContain('--experimental-permission');
      expect(cmdline).not.toContain('--allow-child-process');
      expect(cmdline).not.toContain('--allow-worker');
    } finally {
      child.kill('SIGKILL');
    }
  });
});
