import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { NestFactory } from '@nestjs/core';
import { GraphQLSchemaBuilderModule, GraphQLSchemaFactory } from '@nestjs/graphql';
import { graphqlRuntime } from './graphql-runtime';
import { GRAPHQL_RESOLVERS } from './resolvers';

export const SCHEMA_FILE = resolve(__dirname, '../../schema.gql');

const HEADER = '# Generated from the resolvers by apps/control-plane/src/graphql/generate-schema.ts; do not edit.\n\n';

/** The SDL of the code-first schema, with the file's header. */
export async function buildSchemaSdl(): Promise<string> {
  const app = await NestFactory.createApplicationContext(GraphQLSchemaBuilderModule, { logger: false });
  try {
    const schema = await app.get(GraphQLSchemaFactory).create(GRAPHQL_RESOLVERS);
    return HEADER + printSdl(schema);
  } finally {
    await app.close();
  }
}

/** Sorted as the running server sorts it (sortSchema), so the two print the same. */
export function printSdl(schema: import('graphql').GraphQLSchema): string {
  return graphqlRuntime.printSchema(graphqlRuntime.lexicographicSortSchema(schema)) + '\n';
}

if (require.main === module) {
  buildSchemaSdl()
    .then((sdl) => {
      writeFileSync(SCHEMA_FILE, sdl);
      process.stdout.write(`wrote ${SCHEMA_FILE}\n`);
    })
    .catch((err: unknown) => {
      process.stderr.write(`${String(err)}\n`);
      process.exit(1);
    });
}
