import { Injectable } from '@nestjs/common';
import { toPage, type Page } from '../pagination/cursor';
import { InvalidRequestProblem, NotFoundProblem } from '../problems/problem.exception';
import type { Slo, SloEvent } from './slo';
import { SlosRepository } from './slos.repository';
import type { CreateSloInput } from './dto/slo.schemas';

/** Latency SLOs of one tenant: the tenant id is explicit in every call, and every query runs under its RLS. */
@Injectable()
export class SlosService {
  constructor(private readonly slos: SlosRepository) {}

  async create(tenantId: string, input: CreateSloInput): Promise<Slo> {
    if (!(await this.slos.deploymentExists(tenantId, input.deploymentId))) {
      throw new InvalidRequestProblem([{ in: 'body', name: 'deploymentId', reason: `no deployment ${JSON.stringify(input.deploymentId)} exists` }]);
    }
    return this.slos.create(tenantId, input);
  }

  async get(tenantId: string, id: string): Promise<Slo> {
    const slo = await this.slos.find(tenantId, id);
    if (!slo) throw new NotFoundProblem('SLO', id);
    return slo;
  }

  async list(tenantId: string, limit: number, afterId: string | undefined, deploymentId?: string): Promise<Page<Slo>> {
    return toPage(await this.slos.list(tenantId, limit + 1, afterId, deploymentId), limit, (s) => s.id);
  }

  /**
   * What `list(tenantId, perDeployment, undefined, id)` answers for each of the deployments, in one read (GraphQL's
   * Deployment.slos for a page of deployments); a deployment without SLOs, or not the tenant's, has none.
   */
  async listByDeployment(tenantId: string, deploymentIds: readonly string[], perDeployment: number): Promise<Map<string, Slo[]>> {
    const byDeployment = new Map(deploymentIds.map((id) => [id, [] as Slo[]]));
    if (deploymentIds.length === 0) return byDeployment;
    for (const slo of await this.slos.listByDeployment(tenantId, deploymentIds, perDeployment)) byDeployment.get(slo.deploymentId)?.push(slo);
    return byDeployment;
  }

  async delete(tenantId: string, id: string): Promise<void> {
    if (!(await this.slos.delete(tenantId, id))) throw new NotFoundProblem('SLO', id);
  }

  async events(tenantId: string, sloId: string, limit: number, afterId: string | undefined): Promise<Page<SloEvent>> {
    if (afterId !== undefined && !/^\d{1,18}$/.test(afterId)) {
      throw new InvalidRequestProblem([{ in: 'query', name: 'cursor', reason: 'is not a cursor returned by this API' }]);
    }
    await this.get(tenantId, sloId);
    return toPage(await this.slos.events(tenantId, sloId, limit + 1, afterId), limit, (e) => e.id);
  }
}
