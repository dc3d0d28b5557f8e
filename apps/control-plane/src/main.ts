import 'reflect-metadata';
import { loadConfig } from '@weir/config';
import { createApp } from './app';
import { createRootLogger } from './logging/logger';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createRootLogger(config.WEIR_LOG_LEVEL);
  const app = await createApp({ config, logger });
  await app.listen(config.WEIR_HTTP_PORT, config.WEIR_HTTP_HOST);
  // Addresses only: the configuration also holds credentials, which never reach the log.
  logger.info(
    { host: config.WEIR_HTTP_HOST, port: config.WEIR_HTTP_PORT, queuePrefix: config.WEIR_QUEUE_PREFIX },
    'control plane listening',
  );
}

main().catch((err: unknown) => {
  // Written directly: the logger may not exist yet (a configuration error is reported before it is built).
  process.stderr.write(`${JSON.stringify({ level: 'fatal', msg: 'control plane failed to start', err: String(err instanceof Error ? err.message : err) })}\n`);
  process.exit(1);
});
