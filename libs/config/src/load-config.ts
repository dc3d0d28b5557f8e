import { configSchema, type WeirConfig } from './schema';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * Reads and validates configuration once. A bad value stops the process at start-up with the variable's name
 * and what was expected, rather than failing later at first use.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): WeirConfig {
  // An empty variable (as in a copied .env.example) means "use the default".
  const set = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = configSchema.safeParse(set);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n');
  throw new ConfigError(`Invalid Weir configuration (see .env.example):\n${problems}`);
}
