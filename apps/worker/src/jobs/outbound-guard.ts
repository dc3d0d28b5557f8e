import dgram from 'node:dgram';
import net from 'node:net';

/** An endpoint a job host may connect to. */
export interface OutboundEndpoint {
  readonly host: string;
  readonly port: number;
}

/** A connection the guard refused: tenant code reached for the network outside Weir's connectors. */
export class OutboundDeniedError extends Error {
  override readonly name = 'OutboundDeniedError';
  readonly code = 'ERR_ACCESS_DENIED';
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1', '::ffff:127.0.0.1']);
const hostKey = (host: string) => (LOOPBACK.has(host.toLowerCase()) ? 'loopback' : host.toLowerCase());

/**
 * Lets a job host's process open TCP connections only to `allowed` (its Kafka brokers), and send no UDP at all. Node 20's permission model has no network control, so this closes the gap in
 * JavaScript: every TCP connection of the process — kafkajs's, the AWS SDK's, http, tls, fetch — goes through
 * `net.Socket.prototype.connect`, which is replaced here by a checking one, non-writable and non-configurable so
 * that tenant code cannot put the original back (and `process.binding`, the way around it, is denied by the
 * permission model). Installed before the bundle loads. Not covered: DNS lookups (dns.lookup resolves names).
 */
export function restrictOutbound(allowed: readonly OutboundEndpoint[]): void {
  const permitted = new Set(allowed.map((e) => `${hostKey(e.host)}:${e.port}`));
  const admits = (host: string, port: number) => permitted.has(`${hostKey(host)}:${port}`);
  const connect = net.Socket.prototype.connect;
  const guarded = function connectChecked(this: net.Socket, ...args: unknown[]): net.Socket {
    const target = targetOf(args);
    if (!target || !admits(target.host, target.port)) {
      const where = target ? `${target.host}:${target.port}` : 'a local socket';
      throw new OutboundDeniedError(
        `a job may not connect to ${where}: it reaches the network only through its Kafka sources and sinks (allowed: ${[...permitted].join(', ') || 'none'})`,
      );
    }
    return (connect as (...a: unknown[]) => net.Socket).apply(this, args);
  };
  Object.defineProperty(net.Socket.prototype, 'connect', { value: guarded, writable: false, configurable: false, enumerable: false });
  const noUdp = function udpDenied(): never {
    throw new OutboundDeniedError('a job may not send UDP: it reaches the network only through its Kafka sources and sinks');
  };
  for (const method of ['send', 'connect', 'bind'] as const) {
    Object.defineProperty(dgram.Socket.prototype, method, { value: noUdp, writable: false, configurable: false, enumerable: false });
  }
}

/** The host and port of a Socket#connect call in any of its forms (options, port and host, Node's normalized array), or null for a path. */
function targetOf(args: readonly unknown[]): { host: string; port: number } | null {
  const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
  if (typeof first === 'object' && first !== null) {
    const o = first as { path?: unknown; host?: unknown; hostname?: unknown; port?: unknown };
    if (o.path !== undefined && o.path !== null) return null;
    return { host: String(o.host ?? o.hostname ?? 'localhost'), port: Number(o.port) };
  }
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    return { host: typeof args[1] === 'string' ? args[1] : 'localhost', port: Number(first) };
  }
  return null;
}

/** Where a job host may connect: its Kafka brokers (host:port, IPv6 in brackets). Its object store goes through the worker. */
export function outboundOf(kafkaBrokers: readonly string[]): OutboundEndpoint[] {
  return kafkaBrokers.map((broker) => {
    const at = broker.lastIndexOf(':');
    return { host: broker.slice(0, at).replace(/^\[|\]$/g, ''), port: Number(broker.slice(at + 1)) };
  });
}
