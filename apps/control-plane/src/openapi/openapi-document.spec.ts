import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig } from '@weir/config';
import { describe, expect, it } from 'vitest';
import { createApp } from '../app';
import { buildOpenApiDocument } from './document';

const CHECKED_IN = resolve(__dirname, '../../../../openapi/openapi.json');

describe('openapi/openapi.json', () => {
  it('is what the code generates (run `npm run openapi` after changing an endpoint)', async () => {
    // Built, not initialised: nothing connects, as in generate.ts.
    const app = await createApp({ config: { ...loadConfig({}), WEIR_LOG_LEVEL: 'warn' } }, { init: false });
    try {
      const generated = `${JSON.stringify(buildOpenApiDocument(app), null, 2)}\n`;
      expect(readFileSync(CHECKED_IN, 'utf8'), 'openapi/openapi.json is stale: run `npm run openapi`').toBe(generated);
    } finally {
      await app.close();
    }
  });
});
