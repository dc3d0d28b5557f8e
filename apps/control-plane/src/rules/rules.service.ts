import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { PoolClient } from '@weir/db';
import { toPage, type Page } from '../pagination/cursor';
import { PROBLEM_TYPES } from '../problems/problem-details';
import { InvalidRequestProblem, NotFoundProblem, ProblemException } from '../problems/problem.exception';
import { TenantDb } from '../tenancy';
import { progressMessage, RuleAcksCollector } from './rule-acks.collector';
import { DeploymentRulesSchemas } from '../bundles/deployment-rules-schemas';
import { validateRuleSet } from './rule-set-validator';
import type { Rollout, RolloutKind, RolloutStatus, RuleSetVersion } from './rule-set';
import { rolloutStatus } from './rollout-progress';
import { expectedRuleIds, rolloutRecords } from './rollout-records';
import { RulesKafka, RulesPublishError } from './rules-kafka';
import { rulesTargetOf, type RulesTarget } from './rules-topics';
import { RulesRepository } from './rules.repository';
import { EventPublisher } from '../events/events';
import { ShadowResultsReader, type ShadowResults } from './shadow-results';

/** The active track: rollouts and rollbacks replace the job's rules; shadow rollouts run beside them. */
const ACTIVE_KINDS: readonly RolloutKind[] = ['ROLLOUT', 'ROLLBACK'];

export interface CreatedVersion {
  readonly version: RuleSetVersion;
  readonly rollout: RolloutStatus;
}

/**
 * Rule sets of a deployment: validated, numbered immutable versions, each rolled out to the running job by
 * publishing its rules to the job's rules topic (broadcast input, so the change is ordered with the data and part of
 * checkpoints), acknowledged per subtask through the acks topic. Tenant id explicit in every call; RLS on every query.
 */
@Injectable()
export class RulesService {
  constructor(
    private readonly db: TenantDb,
    private readonly repo: RulesRepository,
    private readonly kafka: RulesKafka,
    private readonly collector: RuleAcksCollector,
    private readonly events: EventPublisher,
    private readonly shadowReader: ShadowResultsReader,
    private readonly schemas: DeploymentRulesSchemas,
  ) {}

  /** Validates, stores version N+1 and rolls it out. */
  async create(tenantId: string, deploymentId: string, document: unknown): Promise<CreatedVersion> {
    const target = await this.target(tenantId, deploymentId);
    // The deployment's own schema: its job as its config builds it (a window limit of its properties, say).
    const schema = await this.schemas.of({ deploymentId, bundle: target.bundle, config: target.config, bundleSchema: target.rulesSchema });
    const checked = validateRuleSet(document, schema);
    if (!checked.ok) throw new InvalidRequestProblem(checked.errors);
    const { version, rollout } = await this.db.run(tenantId, async (client) => {
      await this.repo.lockDeployment(client, deploymentId);
      const v = await this.repo.insertVersion(client, tenantId, deploymentId, checked.rules);
      return { version: v, rollout: await this.newRollout(client, tenantId, target, v, 'ROLLOUT') };
    });
    return { version, rollout: await this.publish(tenantId, target, version, rollout) };
  }

  /** A new rollout of an earlier version's content (the version number travels unchanged: alerts name it). */
  async rollback(tenantId: string, deploymentId: string, toVersion: number): Promise<RolloutStatus> {
    const target = await this.target(tenantId, deploymentId);
    const { version, rollout } = await this.db.run(tenantId, async (client) => {
      await this.repo.lockDeployment(client, deploymentId);
      const v = await this.repo.findVersion(client, deploymentId, toVersion);
      if (!v) throw new InvalidRequestProblem([{ in: 'body', name: 'toVersion', reason: `deployment ${deploymentId} has no rules version ${toVersion}` }]);
      return { version: v, rollout: await this.newRollout(client, tenantId, target, v, 'ROLLBACK') };
    });
    return this.publish(tenantId, target, version, rollout);
  }

  /**
   * Evaluates a version beside the active rules: its rules are published as shadow versions (same ids, `shadow: true`),
   * judged with state of their own, and their alerts go to the job's shadow output instead of its alerts. A new shadow
   * rollout replaces the previous shadow rules (those it lacks are deleted from the shadow slot only).
   */
  async shadow(tenantId: string, deploymentId: string, version: number): Promise<RolloutStatus> {
    const target = await this.target(tenantId, deploymentId);
    const { v, rollout } = await this.db.run(tenantId, async (client) => {
      await this.repo.lockDeployment(client, deploymentId);
      const found = await this.repo.findVersion(client, deploymentId, version);
      if (!found) throw new NotFoundProblem('rules version', `${deploymentId}/${version}`);
      return { v: found, rollout: await this.newRollout(client, tenantId, target, found, 'SHADOW') };
    });
    return this.publish(tenantId, target, v, rollout);
  }

  /** What a version evaluated in shadow would have raised (read from the job's shadow-alerts topic). */
  async shadowResults(tenantId: string, deploymentId: string, version: number, limit: number): Promise<ShadowResults> {
    const target = await this.target(tenantId, deploymentId);
    await this.get(tenantId, deploymentId, version);
    return this.shadowReader.read(target.shadowAlertsTopic, version, limit);
  }

  async list(tenantId: string, deploymentId: string, limit: number, before: string | undefined): Promise<Page<RuleSetVersion>> {
    const beforeVersion = before === undefined ? undefined : Number(before);
    if (before !== undefined && !(Number.isInteger(beforeVersion) && beforeVersion! >= 1)) {
      throw new InvalidRequestProblem([{ in: 'query', name: 'cursor', reason: 'is not a cursor returned by this API' }]);
    }
    await this.target(tenantId, deploymentId);
    const rows = await this.db.readWith(tenantId, (c) => this.repo.listVersions(c, deploymentId, limit + 1, beforeVersion));
    return toPage(rows, limit, (v) => String(v.version));
  }

  async get(tenantId: string, deploymentId: string, version: number): Promise<RuleSetVersion> {
    const found = await this.db.readWith(tenantId, (c) => this.repo.findVersion(c, deploymentId, version));
    if (!found) throw new NotFoundProblem('rules version', `${deploymentId}/${version}`);
    return found;
  }

  async rollout(tenantId: string, deploymentId: string, rolloutId: string): Promise<RolloutStatus> {
    const status = await this.db.run(tenantId, async (client) => {
      const r = await this.repo.findRollout(client, deploymentId, rolloutId);
      return r ? rolloutStatus(r, await this.repo.acks(client, r.id)) : null;
    });
    if (!status) throw new NotFoundProblem('rollout', rolloutId);
    // After a control-plane restart nobody may be collecting: reading the rollout resumes it.
    if (status.phase === 'ROLLING_OUT') this.collector.watch(tenantId, deploymentId, status.acksTopic);
    return status;
  }

  async target(tenantId: string, deploymentId: string): Promise<RulesTarget> {
    const target = await this.db.readWith(tenantId, (c) => rulesTargetOf(c, tenantId, deploymentId));
    if (!target) throw new NotFoundProblem('deployment', deploymentId);
    return target;
  }

  /** Records the rollout (committed before publishing, so no ack can arrive for an unknown rollout). */
  private async newRollout(client: PoolClient, tenantId: string, target: RulesTarget, v: RuleSetVersion, kind: RolloutKind): Promise<Rollout> {
    const track = kind === 'SHADOW' ? (['SHADOW'] as const) : ACTIVE_KINDS;
    const previous = await this.repo.latestRollout(client, target.deploymentId, track);
    const previousRules = previous ? (await this.repo.findVersion(client, target.deploymentId, previous.version))?.rules ?? [] : [];
    // Strictly increasing per deployment: the timestamp is how acks name their rollout.
    const publishTs = Math.max(Date.now(), (await this.repo.maxPublishTs(client, target.deploymentId)) + 1);
    await this.repo.supersedeBefore(client, target.deploymentId, publishTs, track);
    return this.repo.insertRollout(client, tenantId, {
      id: `ro_${randomBytes(10).toString('hex')}`,
      deploymentId: target.deploymentId,
      version: v.version,
      kind,
      publishTs,
      rulesTopic: target.rulesTopic,
      acksTopic: target.acksTopic,
      expectedRuleIds: expectedRuleIds(v, previousRules),
    });
  }

  private async publish(tenantId: string, target: RulesTarget, v: RuleSetVersion, rollout: Rollout): Promise<RolloutStatus> {
    const records = rolloutRecords(rollout, v);
    let offset: string;
    try {
      await this.kafka.ensureTopics([target.rulesTopic, target.acksTopic]);
      this.collector.watch(tenantId, target.deploymentId, target.acksTopic);
      offset = await this.kafka.publish(records);
    } catch (err) {
      const reason = err instanceof RulesPublishError ? err.message : `Kafka is unavailable: ${(err as Error).message}`;
      await this.db.run(tenantId, (c) => this.repo.finish(c, rollout.id, 'FAILED', reason));
      throw new ProblemException(503, PROBLEM_TYPES.unavailable, 'Rules not published', `version ${v.version} is stored but was not published: ${reason}; roll it back to retry`);
    }
    await this.db.run(tenantId, (c) => this.repo.setRulesOffset(c, rollout.id, offset));
    const status = rolloutStatus({ ...rollout, rulesOffset: offset }, []);
    await this.events.publish('rollouts', tenantId, target.deploymentId, progressMessage(status));
    return status;
  }
}
