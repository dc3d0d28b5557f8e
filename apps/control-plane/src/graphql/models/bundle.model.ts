import { Field, Float, ID, Int, ObjectType } from '@nestjs/graphql';
import type { Bundle } from '../../bundles';

@ObjectType('Bundle', { description: 'An immutable version of a job bundle (upload: POST /v1/bundles, multipart).' })
export class BundleModel {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field() version!: string;
  @Field({ description: 'sha256 of the code, hex' }) sha256!: string;
  @Field(() => Float) sizeBytes!: number;
  @Field() entryPoint!: string;
  @Field(() => [String]) operatorIds!: string[];
  @Field(() => Int) defaultParallelism!: number;
  @Field(() => Int, { description: 'Key groups: fixed for the life of the state' }) maxParallelism!: number;
  @Field({ description: 'The JSON Schema of the rules the job accepts, as JSON' }) rulesSchema!: string;
  @Field(() => [String], { description: 'Kafka topics the job declares' }) topics!: string[];
  @Field() createdAt!: Date;

  static from(b: Bundle): BundleModel {
    return {
      id: b.id,
      name: b.name,
      version: b.version,
      sha256: b.sha256,
      sizeBytes: b.sizeBytes,
      entryPoint: b.manifest.entryPoint,
      operatorIds: [...b.manifest.operatorIds],
      defaultParallelism: b.manifest.defaultParallelism,
      maxParallelism: b.manifest.maxParallelism,
      rulesSchema: JSON.stringify(b.manifest.rulesSchema),
      topics: [...(b.manifest.topics ?? [])],
      createdAt: b.createdAt,
    };
  }
}

@ObjectType()
export class BundlePage {
  @Field(() => [BundleModel]) items!: BundleModel[];
  @Field(() => String, { nullable: true }) nextCursor!: string | null;
}
