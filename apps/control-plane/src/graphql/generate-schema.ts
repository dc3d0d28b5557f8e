import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { NestFactory } from '@nestjs/core';
import { GraphQLSchemaBuilderModule, GraphQLSchemaFactory } from '@nestjs/graphql';
import { lexicographicSortSchema, printSchema } from 'graphql';
import { GRAPHQL_RESOLVERS } from './resolvers';

export const SCHEMA_FILE = resolve(__dirname, '../../schema.gql');

const HEADER = '# Generated from the resolvers by apps/control-plane/src/graphql/generate-schema.ts; do not edit.\n\n';

/** The SDL of the code-first schema, sorted as the running server sorts it (sortSchema). */
export async function buildSchemaSdl(): Promise<string> {
  const app = await NestFactory.createApplicationContext(GraphQLSchemaBuilderModule, { logger: false });
  try {
    const schema = await app.get(GraphQLSchemaFactory).create(GRAPHQL_RESOLVERS);
    return HEADER + printSchema(lexicographicSortSchema(schema)) + '\n';
  } finally {
    await app.close();
  }
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
