/**
 * Child process of bench/api.ts, so that the servers measured never share an event loop with the load generator:
 * - `weir`: the control plane itself (createApp, exactly as main.ts builds it) on a loopback port;
 * - `fanout`: the baseline for subscriptions, raw Redis pub/sub relayed to plain WebSocket clients (one
 *   subscriber connection, each message sent as received to every socket), on a loopback port.
 * Reports `{ port }` over IPC once listening, and exits on SIGTERM.
 */
import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '@weir/config';
import { Redis } from 'ioredis';
import { WebSocketServer } from 'ws';
import { createApp } from '../apps/control-plane/src/app';

async function weir(): Promise<{ port: number; close: () => Promise<void> }> {
  const config = loadConfig({ ...process.env, WEIR_LOG_LEVEL: 'warn' });
  const app = await createApp({ config });
  await app.listen(0, '127.0.0.1');
  return { port: (app.getHttpServer().address() as AddressInfo).port, close: () => app.close() };
}

async function fanout(channel: string): Promise<{ port: number; close: () => Promise<void> }> {
  const redis = new Redis(process.env.WEIR_REDIS_URL ?? 'redis://127.0.0.1:6379');
  const server: Server = createServer();
  const wss = new WebSocketServer({ server });
  redis.on('message', (_channel: string, message: string) => {
    for (const client of wss.clients) client.send(message);
  });
  await redis.subscribe(channel);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      redis.disconnect();
    },
  };
}

async function main(): Promise<void> {
  const [mode, channel] = process.argv.slice(2);
  const running = mode === 'weir' ? await weir() : await fanout(channel);
  process.once('SIGTERM', () => void running.close().finally(() => process.exit(0)));
  process.send?.({ port: running.port });
}

main().catch((err: unknown) => {
  process.stderr.write(`bench server failed: ${String(err)}\n`);
  process.exit(1);
});
