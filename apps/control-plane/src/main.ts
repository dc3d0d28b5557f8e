import 'reflect-metadata';
import { loadConfig } from '@weir/config';
import type { Logger } from 'pino';
import { createApp } from './app';
import { ROOT_LOGGER } from './control-plane-options';

async function main(): Promise<void> {
  const config = loadConfig();
  const app = await createApp({ config });
  await app.listen(config.WEIR_HTTP_PORT, config.WEIR_HTTP_HOST);
  // Addresses only: the configuration also holds credentials, which never reach the log.
  app.get<symbol, Logger>(ROOT_LOGGER).info(
    { host: config.WEIR_HTTP_HOST, port: config.WEIR_HTTP_PORT, queuePrefix: config.WEIR_QUEUE_PREFIX },
    'control plane listening',
  );
}

main().catch((err: unknown) => {
  // Written directly: the logger may not exist yet (a configuration error is reported before it is built).
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`${JSON.stringify({ level: 'fatal', msg: 'control plane failed to start', err: message })}\n`);
  process.exit(1);
});
