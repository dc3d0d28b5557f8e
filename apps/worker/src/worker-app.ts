import { rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { createBlobStore, type BlobStore } from '@weir/blob';
import { deadLetterTopic } from '@weir/engine';
import { createKafkaConnector } from '@weir/kafka';
import type { WeirConfig } from '@weir/config';
import {
  createCommandConsumer,
  createWorkerReporter,
  type CommandConsumer,
  type WorkerReporter,
} from '@weir/protocol';
import { BundleCache } from './bundles/bundle-cache';
import { WarmJobHosts } from './jobs/job-host-forks';
import { JobSupervisor } from './jobs/job-supervisor';
import { TenantKafkaAccess } from './kafka-access/tenant-kafka-access';
import { tenantKafkaSecret } from './kafka-access/tenant-kafka-secret';
import { startMetricsServer } from './metrics-server';

export const WORKER_VERSION = '0.1.0';

/**
 * The worker process: announces itself and heartbeats to the control plane, takes commands from its own queue,
 * and runs each assigned job in a job host child process.
 */
export class WorkerApp {
  private readonly blobs: BlobStore;
  readonly supervisor: JobSupervisor;
  private readonly reporter: WorkerReporter;
  private readonly commands: CommandConsumer;
  private readonly kafkaAccess: TenantKafkaAccess | undefined;
  private metricsServer: Server | undefined;
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly config: WeirConfig,
    private readonly logger: Logger,
  ) {
    const home = resolve(config.WEIR_HOME);
    this.blobs = createBlobStore(config);
    // The cache asks the supervisor (built just below) which bundles its jobs use: only once it evicts.
    const bundles = new BundleCache(this.blobs, join(home, 'worker', config.WEIR_WORKER_ID, 'bundles'), {
      maxBytes: config.WEIR_WORKER_BUNDLE_CACHE_BYTES,
      inUse: () => this.supervisor.bundlesInUse(),
      logger,
    });
    const hostsRoot = join(home, 'worker', config.WEIR_WORKER_ID, 'job-hosts');
    // No job host of this worker id runs yet (they exit with the worker that forked them): what is here is left from
    // a previous run that crashed. Removed before the first spare is forked.
    rmSync(hostsRoot, { recursive: true, force: true });
    const limits = { maxHeapMb: config.WEIR_JOB_HOST_MAX_HEAP_MB, stallTimeoutMs: config.WEIR_JOB_HOST_STALL_TIMEOUT_MS };
    // The platform's client creates tenants' Kafka users and ACLs; their job hosts then connect as their tenant.
    this.kafkaAccess = config.WEIR_KAFKA_TENANT_BROKERS
      ? new TenantKafkaAccess(
          createKafkaConnector({ brokers: config.WEIR_KAFKA_BROKERS, clientId: `${config.WEIR_KAFKA_CLIENT_ID}-kafka-access` }).admin(),
          config.WEIR_KAFKA_TENANT_BROKERS,
          () => tenantKafkaSecret(config),
        )
      : undefined;
    this.supervisor = new JobSupervisor({
      bundles,
      blobs: this.blobs,
      hostsRoot,
      deadLetterTopic,
      limits,
      ...(this.kafkaAccess ? { kafkaAccess: this.kafkaAccess } : {}),
      warmHosts: new WarmJobHosts({ spares: config.WEIR_WORKER_WARM_JOB_HOSTS, forkOptions: { limits, hostsRoot } }),
    });
    this.reporter = createWorkerReporter(
      config,
      { workerId: config.WEIR_WORKER_ID, slots: config.WEIR_WORKER_SLOTS, version: WORKER_VERSION },
      {
        logger,
        status: () => ({ runningSubtasks: this.supervisor.runningSubtasks(), metrics: this.supervisor.drainMetrics() }),
      },
    );
    this.commands = createCommandConsumer(
      config,
      config.WEIR_WORKER_ID,
      {
        'run-subtasks': (command) => this.supervisor.run(command),
        'stop-subtasks': (command) => this.supervisor.stop(command),
        'take-savepoint': (command) => this.supervisor.takeSavepoint(command),
        'move-key-groups': (command) => this.supervisor.moveKeyGroups(command),
        'rescale-run': (command, context) => this.supervisor.rescale(command, context),
        'split-keys': (command) => this.supervisor.splitKeys(command),
      },
      { logger },
    );
  }

  async start(): Promise<void> {
    await this.commands.start();
    await this.reporter.start();
    if (this.config.WEIR_WORKER_METRICS_PORT) {
      this.metricsServer = await startMetricsServer(this.config.WEIR_HTTP_HOST, this.config.WEIR_WORKER_METRICS_PORT, () =>
        this.supervisor.metrics(),
      );
    }
    this.logger.info({ workerId: this.config.WEIR_WORKER_ID, slots: this.config.WEIR_WORKER_SLOTS }, 'worker started');
  }

  /** Stops taking commands, stops every job, says goodbye. Once: a second call (a second signal) waits for the first. */
  stop(reason: string): Promise<void> {
    this.stopping ??= this.shutDown(reason);
    return this.stopping;
  }

  private async shutDown(reason: string): Promise<void> {
    this.logger.info({ reason }, 'worker stopping');
    await this.commands.close();
    await this.supervisor.close();
    await this.kafkaAccess?.close();
    await this.reporter.stop(reason);
    await new Promise<void>((done) => (this.metricsServer ? this.metricsServer.close(() => done()) : done()));
    this.blobs.close();
  }
}
