import { Field, Float, ObjectType } from '@nestjs/graphql';

@ObjectType({ description: 'Largest and mean value over the subtasks.' })
export class MaxMean {
  @Field(() => Float) max!: number;
  @Field(() => Float) mean!: number;
}
