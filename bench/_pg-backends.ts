/**
 * The CPU time of the Postgres backends that serve one process's connections, for benchmarks that must count the
 * database's share of a request too (moving work from Node into SQL must not look like a saving). Linux only:
 * /proc maps the process's sockets to the server-side sockets of the same TCP connections and those to the backend
 * processes holding them; elsewhere it returns undefined. Backends are matched by socket, so other processes'
 * connections to the same server are never counted.
 */
import { readdir, readFile, readlink } from 'node:fs/promises';

/** CPU so far (user + system, µs) per backend pid. Diff two snapshots with `cpuBetween`. */
export type BackendCpu = ReadonlyMap<number, number>;

const CLOCK_TICKS_PER_SECOND = 100;

export async function postgresBackendCpu(clientPid: number, serverPort: number): Promise<BackendCpu | undefined> {
  try {
    const connections = await tcpConnections();
    const clientInodes = await socketInodes(clientPid);
    const clientPorts = new Set(connections.filter((c) => clientInodes.has(c.inode) && c.remotePort === serverPort).map((c) => c.localPort));
    const serverInodes = new Set(connections.filter((c) => c.localPort === serverPort && clientPorts.has(c.remotePort)).map((c) => c.inode));
    const cpu = new Map<number, number>();
    for (const pid of await postgresPids()) {
      const inodes = await socketInodes(pid).catch(() => new Set<string>());
      if ([...inodes].some((inode) => serverInodes.has(inode))) cpu.set(pid, await processCpuMicros(pid));
    }
    return cpu;
  } catch {
    return undefined;
  }
}

/** CPU used between two snapshots; a backend that appeared in between counts from zero. */
export function cpuBetween(before: BackendCpu | undefined, after: BackendCpu | undefined): number | undefined {
  if (!before || !after) return undefined;
  let total = 0;
  for (const [pid, micros] of after) total += micros - (before.get(pid) ?? 0);
  return total;
}

interface TcpConnection {
  readonly localPort: number;
  readonly remotePort: number;
  readonly inode: string;
}

async function tcpConnections(): Promise<TcpConnection[]> {
  const tables = await Promise.all(['/proc/net/tcp', '/proc/net/tcp6'].map((f) => readFile(f, 'utf8').catch(() => '')));
  const connections: TcpConnection[] = [];
  for (const line of tables.join('\n').split('\n')) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 10 || !cols[1].includes(':')) continue;
    const port = (address: string) => parseInt(address.slice(address.lastIndexOf(':') + 1), 16);
    connections.push({ localPort: port(cols[1]), remotePort: port(cols[2]), inode: cols[9] });
  }
  return connections;
}

async function socketInodes(pid: number): Promise<Set<string>> {
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const match = /^socket:\[(\d+)\]$/.exec(target);
    if (match) inodes.add(match[1]);
  }
  return inodes;
}

async function postgresPids(): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const comm = await readFile(`/proc/${entry}/comm`, 'utf8').catch(() => '');
    if (comm.trim() === 'postgres') pids.push(Number(entry));
  }
  return pids;
}

async function processCpuMicros(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at the last ')'; utime and stime are fields 14, 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS_PER_SECOND;
}
