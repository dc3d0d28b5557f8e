import pino from 'pino';
import { loadConfig } from '@weir/config';
import { WorkerApp } from './worker-app';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = pino({ base: { service: 'worker', workerId: config.WEIR_WORKER_ID }, level: config.WEIR_LOG_LEVEL });
  const app = new WorkerApp(config, logger);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.stop(`received ${signal}`).then(
      () => process.exit(0),
      (err: Error) => {
        logger.error({ err: err.message }, 'unclean shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  await app.start();
}

main().catch((err: Error) => {
  console.error(`[worker] ${err.message}`);
  process.exit(1);
});
