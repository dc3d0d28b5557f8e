import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './load-config';
import { configSchema } from './schema';

describe('loadConfig', () => {
  it('works with no environment at all (every setting has a default)', () => {
    const config = loadConfig({});
    expect(config.WEIR_KAFKA_BROKERS).toEqual(['127.0.0.1:9092']);
    expect(config.WEIR_HTTP_PORT).toBe(8080);
    expect(config.WEIR_S3_FORCE_PATH_STYLE).toBe(true);
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ WEIR_WORKER_METRICS_PORT: '', WEIR_HTTP_PORT: '' }).WEIR_HTTP_PORT).toBe(8080);
  });

  it('parses lists and numbers', () => {
    const config = loadConfig({ WEIR_KAFKA_BROKERS: 'a:1, b:2', WEIR_WORKER_SLOTS: '8' });
    expect(config.WEIR_KAFKA_BROKERS).toEqual(['a:1', 'b:2']);
    expect(config.WEIR_WORKER_SLOTS).toBe(8);
  });

  it('reaches AWS S3 itself with WEIR_S3_ENDPOINT=aws', () => {
    expect(loadConfig({ WEIR_S3_ENDPOINT: 'aws' }).WEIR_S3_ENDPOINT).toBeNull();
    expect(loadConfig({}).WEIR_S3_ENDPOINT).toBe('http://127.0.0.1:4568');
  });

  it('names the variable and the problem when a value is wrong', () => {
    expect(() => loadConfig({ WEIR_HTTP_PORT: 'eighty' })).toThrow(ConfigError);
    expect(() => loadConfig({ WEIR_KAFKA_BROKERS: 'no-port' })).toThrow(/WEIR_KAFKA_BROKERS.*host:port/);
    expect(() => loadConfig({ WEIR_PG_URL: 'not a url' })).toThrow(/WEIR_PG_URL/);
  });

  it('bounds the worker bundle cache at 2 GiB unless told otherwise, in whole positive bytes', () => {
    expect(loadConfig({}).WEIR_WORKER_BUNDLE_CACHE_BYTES).toBe(2 * 1024 ** 3);
    expect(loadConfig({ WEIR_WORKER_BUNDLE_CACHE_BYTES: '1048576' }).WEIR_WORKER_BUNDLE_CACHE_BYTES).toBe(1048576);
    for (const bad of ['2GiB', '0', '-1', '1.5']) {
      expect(() => loadConfig({ WEIR_WORKER_BUNDLE_CACHE_BYTES: bad })).toThrow(
        /WEIR_WORKER_BUNDLE_CACHE_BYTES: expected a positive whole number of bytes/,
      );
    }
  });

  it('documents every setting in .env.example, and nothing else', () => {
    const example = readFileSync(resolve(__dirname, '../../../.env.example'), 'utf8');
    const documented = [...example.matchAll(/^([A-Z0-9_]+)=/gm)].map((m) => m[1]).sort();
    expect(documented).toEqual(Object.keys(configSchema.shape).sort());
  });
});
