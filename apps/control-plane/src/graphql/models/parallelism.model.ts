import { Field, Int, ObjectType } from '@nestjs/graphql';
import type { Parallelism } from '../../deployments/deployment';

@ObjectType('OperatorParallelism')
export class OperatorParallelismModel {
  @Field() operatorId!: string;
  @Field(() => Int) parallelism!: number;
}

@ObjectType('Parallelism', { description: 'Per-operator parallelism; operators not listed run at `default`.' })
export class ParallelismModel {
  @Field(() => Int) default!: number;
  @Field(() => [OperatorParallelismModel]) operators!: OperatorParallelismModel[];

  static from(p: Parallelism): ParallelismModel {
    return { default: p.default, operators: Object.entries(p.operators).map(([operatorId, parallelism]) => ({ operatorId, parallelism })) };
  }
}
