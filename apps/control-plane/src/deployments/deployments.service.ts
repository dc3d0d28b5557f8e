import { Inject, Injectable } from '@nestjs/common';
import type { WeirConfig } from '@weir/config';
import type { PoolClient, SqlClient } from '@weir/db';
import { DeploymentRulesSchemas } from '../bundles/deployment-rules-schemas';
import { WEIR_CONFIG } from '../control-plane-options';
import { toPage, type Page } from '../pagination/cursor';
import type { InvalidParameter } from '../problems/problem-details';
import { InvalidRequestProblem, NotFoundProblem } from '../problems/problem.exception';
import { slotsFor } from '../placement/subtask-plan';
import { Reconciler } from '../reconciler/reconciler.service';
import type { Principal } from '../tenancy/principal';
import { QuotaService } from '../tenancy/quota.service';
import { TenantDb } from '../tenancy/tenant-db';
import { BundleReader, type DeployableBundle } from './bundle-reader';
import { DEFAULT_AUTOSCALER_MODE, DEFAULT_PARTITIONER_MODE, type Deployment, type DeploymentRun, type DeploymentStatus, type DeploymentTransition, type Parallelism, type PendingUpgrade } from './deployment';
import { newDeploymentId } from './deployment-id';
import { DeploymentConflictProblem } from './deployment.problems';
import { DeploymentsRepository, type RequestedRestore } from './deployments.repository';
import type { BundleRefInput, CreateDeploymentBody, ParallelismInput, PatchDeploymentBody, UpgradeDeploymentBody } from './dto/deployment-input';
import { resolveParallelism, undispatchableOperators } from './parallelism';
import { capacityViolations } from '../placement/capacity-settings';
import { placementViolations } from '../placement/placement-settings';
import { autoscalerViolations } from '../autoscaler/autoscaler-settings';
import { partitionerViolations } from '../partitioner/partitioner-settings';
import { checkpointingViolations } from '../savepoints/checkpointing-settings';
import { ScalingPolicyWriter } from '../scaling/scaling-policy.writer';
import { bundleTopicViolations, configTopicViolations } from './topic-namespace';

export interface DeploymentHistory {
  readonly runs: readonly DeploymentRun[];
  readonly transitions: Page<DeploymentTransition>;
}

/** Deployments as tenants manage them. The reconciler does the rest; each change kicks it. */
@Injectable()
export class DeploymentsService {
  constructor(
    private readonly db: TenantDb,
    private readonly deployments: DeploymentsRepository,
    private readonly bundles: BundleReader,
    private readonly quotas: QuotaService,
    private readonly reconciler: Reconciler,
    private readonly policies: ScalingPolicyWriter,
    @Inject(WEIR_CONFIG) private readonly config: WeirConfig,
    private readonly rulesSchemas: DeploymentRulesSchemas,
  ) {}

  async create(principal: Principal, body: CreateDeploymentBody): Promise<Deployment> {
    const { tenantId } = principal;
    const created = await this.db.run(tenantId, async (client) => {
      const bundle = await this.resolveBundle(client, body.bundle, body.bundleId);
      const { parallelism, errors } = resolveParallelism(body.parallelism, bundle, 'parallelism');
      const field = body.bundleId ? 'bundleId' : 'bundle';
      errors.push(
        ...configTopicViolations(tenantId, body.config?.topics),
        ...bundleTopicViolations(tenantId, bundle.topics, field),
        ...undispatchableOperators(bundle, field),
        ...checkpointingViolations(body.config?.properties),
        ...placementViolations(body.config?.properties),
        ...capacityViolations(body.config?.properties),
        ...partitionerViolations(body.config?.properties),
        ...autoscalerViolations(body.config?.properties, bundle.maxParallelism),
      );
      if (errors.length) throw new InvalidRequestProblem(errors);
      const slots = slotsFor(bundle, parallelism);
      await this.quotas.assertCanDeploy(client, tenantId, { parallelism: slots }, (c) => this.deployments.usage(c));
      const desiredState = body.desiredState ?? 'RUNNING';
      const deployment = await this.deployments.insert(client, {
        tenantId,
        installation: this.config.WEIR_QUEUE_PREFIX,
        id: newDeploymentId(),
        name: body.name,
        bundleId: bundle.id,
        parallelism,
        slots,
        config: body.config ?? {},
        desiredState,
        partitionerMode: body.partitionerMode ?? DEFAULT_PARTITIONER_MODE,
        autoscalerMode: body.autoscalerMode ?? DEFAULT_AUTOSCALER_MODE,
        reason: `created from bundle ${bundle.name}@${bundle.version} with desired state ${desiredState} (key ${principal.keyId})`,
      });
      if (!deployment) throw new DeploymentConflictProblem(`a deployment named ${JSON.stringify(body.name)} exists; cancel it or choose another name`);
      return { deployment, bundle };
    });
    this.reconciler.kick();
    // Its rules schema (its job built with its config, in the sandbox), read now rather than at its first rule set.
    this.rulesSchemas.warm({ deploymentId: created.deployment.id, bundle: created.bundle, config: body.config ?? {} });
    return created.deployment;
  }

  get(tenantId: string, id: string): Promise<Deployment> {
    return this.db.readWith(tenantId, (client) => this.mustFind(client, id));
  }

  async list(tenantId: string, limit: number, afterId: string | undefined, status: DeploymentStatus | undefined): Promise<Page<Deployment>> {
    const rows = await this.db.readWith(tenantId, (client) => this.deployments.list(client, limit + 1, afterId, status));
    return toPage(rows, limit, (d) => d.id);
  }

  async patch(principal: Pick<Principal, 'tenantId' | 'keyId'>, id: string, body: PatchDeploymentBody): Promise<Deployment> {
    const updated = await this.db.run(principal.tenantId, async (client) => {
      const current = await this.mustFind(client, id, true);
      assertNotCancelled(current);
      // Start fresh: drop the state kept at suspend (and any requested restore) before the resume can take it.
      if (body.resumeMode === 'stateless') await this.deployments.clearRestore(client, id);
      // The modes are part of the scaling policy: changed, stored and recorded as PATCH …/scaling-policy changes them.
      if (body.partitionerMode || body.autoscalerMode) {
        const modes = { partitioner: body.partitionerMode ? { mode: body.partitionerMode } : {}, autoscaler: body.autoscalerMode ? { mode: body.autoscalerMode } : {} };
        await this.policies.change(client, current, modes, principal.keyId);
      }
      // A controller's mode alone asks nothing of the lifecycle: the deployment is not made due, nor "updated".
      if (!body.parallelism && !body.desiredState) return this.mustFind(client, id);
      if (!body.parallelism) return this.deployments.update(client, id, { desiredState: body.desiredState });
      const rescale = await this.rescaleChange(client, current, body.parallelism);
      return this.deployments.update(client, id, { desiredState: body.desiredState, ...rescale, rescaleMode: body.rescaleMode ?? 'live' });
    });
    this.reconciler.kick();
    return updated;
  }

  /**
   * The parallelism change PATCH {parallelism, rescaleMode: live} makes, in the caller's transaction holding the
   * deployment's row (the autoscaler's, in mode auto): the same resolution, quota check and pending record, so the
   * reconciler rescales it live where the run allows. Throws the problems PATCH answers with (a quota, say); the caller
   * kicks the reconciler after commit.
   */
  async requestLiveRescale(client: PoolClient, current: Deployment, parallelism: ParallelismInput): Promise<Deployment> {
    const rescale = await this.rescaleChange(client, current, parallelism);
    return this.deployments.update(client, current.id, { ...rescale, rescaleMode: 'live' });
  }

  async upgrade(tenantId: string, id: string, body: UpgradeDeploymentBody): Promise<Deployment> {
    const updated = await this.db.run(tenantId, async (client) => {
      const current = await this.mustFind(client, id, true);
      assertNotCancelled(current);
      return this.deployments.update(client, id, await this.upgradeChange(client, current, body));
    });
    this.reconciler.kick();
    return updated;
  }

  /**
   * Starts the deployment from a snapshot, in one transaction with the bundle version and parallelism it is
   * restored into: a reconciler sees either none of it or all of it, so it never starts the restore in the old
   * version, nor the new version without the restore. Whatever the status: a running deployment goes through
   * UPGRADING (its run stops, the next run takes the restore), a resting one is resumed.
   */
  async restore(
    tenantId: string,
    id: string,
    request: { bundleId?: string; parallelism?: ParallelismInput; snapshot: RequestedRestore },
  ): Promise<Deployment> {
    const updated = await this.db.run(tenantId, async (client) => {
      const current = await this.mustFind(client, id, true);
      assertNotCancelled(current);
      let change: Parameters<DeploymentsRepository['update']>[2] = { desiredState: 'RUNNING' };
      if (request.bundleId && request.bundleId !== (current.pendingUpgrade?.bundleId ?? current.bundleId)) {
        change = { ...change, ...(await this.upgradeChange(client, current, { bundleId: request.bundleId, mode: 'savepoint', parallelism: request.parallelism })) };
      } else if (request.parallelism) {
        // The run restarts from the snapshot anyway: the new parallelism goes with that restart, never live first.
        change = { ...change, ...(await this.rescaleChange(client, current, request.parallelism)), rescaleMode: 'restart' };
      }
      await this.deployments.requestRestore(client, tenantId, id, request.snapshot);
      return this.deployments.update(client, id, change);
    });
    this.reconciler.kick();
    return updated;
  }

  async history(tenantId: string, id: string, limit: number, afterId: string | undefined): Promise<DeploymentHistory> {
    if (afterId !== undefined && !/^\d{1,18}$/.test(afterId)) {
      throw new InvalidRequestProblem([{ in: 'query', name: 'cursor', reason: 'is not a cursor returned by this API' }]);
    }
    return this.db.run(tenantId, async (client) => {
      await this.mustFind(client, id);
      const [runs, transitions] = [await this.deployments.runs(client, id, 100), await this.deployments.transitions(client, id, limit + 1, afterId)];
      return { runs, transitions: toPage(transitions, limit, (t) => t.id) };
    });
  }

  private async rescaleChange(client: PoolClient, current: Deployment, input: ParallelismInput): Promise<{ pendingParallelism: Parallelism; slots: number }> {
    const bundle = await this.bundleOf(client, current.pendingUpgrade?.bundleId ?? current.bundleId);
    const { parallelism, errors } = resolveParallelism(input, bundle, 'parallelism', current.pendingParallelism ?? current.parallelism);
    if (errors.length) throw new InvalidRequestProblem(errors);
    return { pendingParallelism: parallelism, slots: await this.reserve(client, current, bundle, parallelism) };
  }

  private async upgradeChange(
    client: PoolClient,
    current: Deployment,
    body: Omit<UpgradeDeploymentBody, 'bundle'> & { bundle?: UpgradeDeploymentBody['bundle'] },
  ): Promise<{ pendingUpgrade: PendingUpgrade; pendingParallelism: Parallelism; slots: number }> {
    const field = body.bundleId ? 'bundleId' : 'bundle';
    const [from, to] = [await this.bundleOf(client, current.bundleId), await this.resolveBundle(client, body.bundle, body.bundleId)];
    const errors: InvalidParameter[] = [];
    if (to.name !== from.name) errors.push({ in: 'body', name: field, reason: `must be a version of bundle ${from.name}, not ${to.name}` });
    if (to.id === current.bundleId && !current.pendingUpgrade) errors.push({ in: 'body', name: field, reason: `the deployment already runs ${to.name}@${to.version}` });
    if (body.mode !== 'stateless' && to.maxParallelism !== from.maxParallelism) {
      errors.push({ in: 'body', name: field, reason: `declares maxParallelism ${to.maxParallelism}, but the deployment's state has ${from.maxParallelism} key groups; use mode stateless` });
    }
    const resolved = resolveParallelism(body.parallelism, to, 'parallelism', current.pendingParallelism ?? current.parallelism);
    errors.push(...resolved.errors, ...bundleTopicViolations(current.tenantId, to.topics, field), ...undispatchableOperators(to, field));
    if (errors.length) throw new InvalidRequestProblem(errors);
    const slots = await this.reserve(client, current, to, resolved.parallelism);
    return { pendingUpgrade: { bundleId: to.id, mode: body.mode, requestedAt: new Date().toISOString() }, pendingParallelism: resolved.parallelism, slots };
  }

  /** Checks the tenant's parallelism quota for a changed deployment; returns its new slot count. */
  private async reserve(client: PoolClient, current: Deployment, bundle: DeployableBundle, parallelism: Deployment['parallelism']): Promise<number> {
    const slots = slotsFor(bundle, parallelism);
    const held = await client.query<{ slots: number }>('SELECT slots FROM deployments WHERE id = $1', [current.id]);
    await this.quotas.assertCanDeploy(client, current.tenantId, { parallelism: slots, releasedParallelism: held.rows[0].slots, newDeployment: false }, (c) =>
      this.deployments.usage(c),
    );
    return slots;
  }

  private async mustFind(client: SqlClient, id: string, lock = false): Promise<Deployment> {
    const d = await this.deployments.find(client, id, { lock });
    if (!d) throw new NotFoundProblem('deployment', id);
    return d;
  }

  private async bundleOf(client: PoolClient, id: string): Promise<DeployableBundle> {
    const bundle = await this.bundles.byId(client, id);
    if (!bundle) throw new Error(`bundle ${id} of a deployment is missing (bundles in use cannot be deleted)`);
    return bundle;
  }

  private async resolveBundle(client: PoolClient, ref: BundleRefInput | undefined, bundleId: string | undefined): Promise<DeployableBundle> {
    if (bundleId || (ref && 'id' in ref)) {
      const id = bundleId ?? (ref as { id: string }).id;
      const bundle = await this.bundles.byId(client, id);
      if (!bundle) throw new InvalidRequestProblem([{ in: 'body', name: bundleId ? 'bundleId' : 'bundle.id', reason: `no bundle ${id}` }]);
      return bundle;
    }
    const { name, version } = ref as { name: string; version: string };
    const bundle = await this.bundles.byNameVersion(client, name, version);
    if (!bundle) throw new InvalidRequestProblem([{ in: 'body', name: 'bundle', reason: `no bundle ${name} with version ${version}` }]);
    return bundle;
  }
}

function assertNotCancelled(d: Deployment): void {
  if (d.desiredState === 'CANCELLED') throw new DeploymentConflictProblem(`deployment ${d.id} is cancelled; create a new one`);
}
