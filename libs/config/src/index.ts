export { configSchema, type WeirConfig } from './schema';
export { ConfigError, loadConfig } from './load-config';
