import dns from 'node:dns';
import { isIP } from 'node:net';
import { OutboundDeniedError } from './outbound-guard';

/**
 * Lets a job host's process resolve only `hosts` (its Kafka brokers' names), and make no other DNS query: a query
 * for a name of the tenant's choosing reaches the tenant's own name server, which is a way to carry data out even
 * with every connection refused. `dns.lookup` (the system resolver, which Node's connections use) is wrapped; the
 * c-ares functions (`resolve*`, `reverse`, `lookupService`, `Resolver`), which send queries of their own, throw.
 * Each replacement is non-writable and non-configurable, installed before the bundle loads (with outbound-guard.ts).
 */
export function restrictDns(hosts: readonly string[]): void {
  const allowed = new Set(hosts.map((h) => h.toLowerCase()));
  const denied = (what: string) => new OutboundDeniedError(`a job may not resolve ${what}: it reaches the network only through its Kafka sources and sinks`);
  const admits = (hostname: unknown) => typeof hostname === 'string' && (isIP(hostname) !== 0 || allowed.has(hostname.toLowerCase()));

  const lookup = dns.lookup;
  const guardedLookup = function lookupChecked(hostname: string, ...rest: unknown[]): void {
    if (!admits(hostname)) {
      const callback = rest.at(-1);
      const error = denied(JSON.stringify(String(hostname)));
      if (typeof callback === 'function') return void process.nextTick(() => (callback as (err: Error) => void)(error));
      throw error;
    }
    return (lookup as (...a: unknown[]) => void).call(dns, hostname, ...rest);
  };
  const lookupPromise = dns.promises.lookup;
  const guardedLookupPromise = function lookupChecked(hostname: string, ...rest: unknown[]): Promise<unknown> {
    if (!admits(hostname)) return Promise.reject(denied(JSON.stringify(String(hostname))));
    return (lookupPromise as (...a: unknown[]) => Promise<unknown>).call(dns.promises, hostname, ...rest);
  };
  seal(dns, 'lookup', guardedLookup);
  seal(dns.promises, 'lookup', guardedLookupPromise);

  for (const target of [dns, dns.promises] as Record<string, unknown>[]) {
    for (const name of Object.keys(target)) {
      if (!/^(resolve|reverse|lookupService|setServers)/.test(name) || typeof target[name] !== 'function') continue;
      seal(target, name, function deniedQuery(): never {
        throw denied(`names with dns.${name}`);
      });
    }
    seal(target, 'Resolver', class DeniedResolver {
      constructor() {
        throw denied('names with a dns.Resolver');
      }
    });
  }
}

function seal(target: object, name: string, value: unknown): void {
  Object.defineProperty(target, name, { value, writable: false, configurable: false, enumerable: true });
}
