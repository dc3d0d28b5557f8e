import { Args, Int, Query, Resolver } from '@nestjs/graphql';
import { z } from 'zod';
import type { Principal } from '../../tenancy';
import { WorkerRegistry } from '../../workers/worker-registry.service';
import { WORKER_STATUSES } from '../../workers/worker';
import { workerIdParamsSchema } from '../../workers/dto/list-workers.query';
import { Caller } from '../graphql-auth';
import { pageArgsSchema, parseArgs } from '../graphql-args';
import { WorkerModel, WorkerPage, WorkerStatusEnum } from '../models/worker.model';

const listArgs = pageArgsSchema.extend({ status: z.enum(WORKER_STATUSES).nullish().transform((s) => s ?? undefined) });

/** The fleet (platform view, any read key); subtasks of other tenants are left out of each worker. */
@Resolver(() => WorkerModel)
export class WorkersResolver {
  constructor(private readonly registry: WorkerRegistry) {}

  @Query(() => WorkerPage, { description: 'The worker fleet in id order.' })
  async workers(
    @Caller('read') principal: Principal,
    @Args('limit', { type: () => Int, nullable: true, description: '1-200, default 50' }) limit?: number,
    @Args('cursor', { type: () => String, nullable: true }) cursor?: string,
    @Args('status', { type: () => WorkerStatusEnum, nullable: true }) status?: WorkerStatusEnum,
  ): Promise<WorkerPage> {
    const args = parseArgs(listArgs, { limit, cursor, status });
    const page = await this.registry.list(args.limit, args.cursor, args.status);
    return { items: page.items.map((w) => WorkerModel.from(w, principal.tenantId)), nextCursor: page.nextCursor };
  }

  @Query(() => WorkerModel, { description: 'One worker; NOT_FOUND if no worker has this id.' })
  async worker(@Caller('read') principal: Principal, @Args('id', { type: () => String }) id: string): Promise<WorkerModel> {
    const { id: workerId } = parseArgs(workerIdParamsSchema, { id });
    return WorkerModel.from(await this.registry.get(workerId), principal.tenantId);
  }
}
