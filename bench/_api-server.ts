/**
 * Child process of bench/api.ts, so that the servers measured never share an event loop with the load generator:
 * - `weir`: the control plane itself (createApp, exactly as main.ts builds it) on a loopback port;
 * - `fanout`: the baseline for subscriptions, raw Redis pub/sub relayed to plain WebSocket clients (one
 *   subscriber connection, each message sent as received to every socket), on a loopback port.
 * Reports `{ port }` over IPC once listening, answers `{ cpu: true }` with its process.cpuUsage(), and exits on
 * SIGTERM. The control plane logs at WEIR_LOG_LEVEL (info unless set), as users run it.
 */
import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '@weir/config';
import { Redis } from 'ioredis';
import { WebSocketServer } from 'ws';
import { createApp } from '../apps/control-plane/src/app';

async function weir(): Promise<{ port: number; close: () => Promise<void> }> {
  // The level users run (info: one access-log line per request); bench/api.ts points stdout at a file.
  const config = loadConfig({ ...process.env, WEIR_LOG_LEVEL: process.env.WEIR_LOG_LEVEL ?? 'info' });
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
  // The parent asks for this process's CPU time around each pass: CPU per request holds on a busy machine.
  process.on('message', (m: { cpu?: boolean }) => m.cpu && process.send?.({ cpu: process.cpuUsage() }));
  process.send?.({ port: running.port });
}

main().catch((err: unknown) => {
  process.stderr.write(`bench server failed: ${String(err)}\n`);
  process.exit(1);
});
