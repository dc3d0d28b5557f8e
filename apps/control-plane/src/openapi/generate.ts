/**
 * Writes openapi/openapi.json from the code. Run: node -r @swc-node/register apps/control-plane/src/openapi/generate.ts
 * The app is built but not initialised, so nothing connects to Postgres, Redis, Kafka or S3.
 */
import 'reflect-metadata';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { loadConfig } from '@weir/config';
import { createApp } from '../app';
import { buildOpenApiDocument } from './document';

export const OPENAPI_PATH = resolve(__dirname, '../../../../openapi/openapi.json');

async function main(): Promise<void> {
  const app = await createApp({ config: { ...loadConfig(), WEIR_LOG_LEVEL: 'warn' } }, { init: false });
  try {
    const document = buildOpenApiDocument(app);
    await mkdir(dirname(OPENAPI_PATH), { recursive: true });
    await writeFile(OPENAPI_PATH, `${JSON.stringify(document, null, 2)}\n`);
    process.stdout.write(`wrote ${OPENAPI_PATH}\n`);
  } finally {
    await app.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`openapi generation failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
