import { type Pool, type PoolClient, type QueryConfig, type QueryResult, type QueryResultRow } from 'pg';
import { toDatabaseError } from './errors';
import { brokenBy, queryAsTenant, submitTenantRead } from './tenant-read';
import { assertTenantId } from './with-tenant';

/** The part of pg's client used to batch writes: its socket (corked between submits, uncorked once a turn). */
interface ClientInternals {
  readonly pipeline?: boolean;
  readonly connection?: { readonly stream?: { cork?: () => void; uncork?: () => void } };
}

interface Lane {
  client: PoolClient | undefined;
  acquiring: Promise<PoolClient> | undefined;
  inFlight: number;
  corked: boolean;
  /** When each read in flight was submitted, oldest first (a pipelined connection answers in order). */
  readonly submittedAt: number[];
}

/**
 * A lane whose oldest read has waited this long is stalled (one tenant's slow statement): reads that would queue
 * behind it take a connection of their own instead, so one tenant's slow read delays another's by at most this.
 */
export const LANE_STALL_MS = 10;

/** Pooled clients that already carry the lanes' error listener (the pool hands the same clients out again). */
const listening = new WeakSet<PoolClient>();
const ignore = (): void => undefined;

/**
 * Tenant reads (queryAsTenant's single exchange) pipelined on a few pooled connections: each read is one
 * self-contained extended-protocol exchange whose implicit transaction ends at its own Sync, so reads of different
 * tenants can follow one another on one connection without sharing a setting, and an error in one skips only to
 * its own Sync. Under load this turns a pool checkout, a socket write and a socket read per request into one of
 * each per batch: reads issued during one event-loop turn on a lane go out in one write (the socket is corked
 * until setImmediate) and their answers usually come back in one read, for Node and for the Postgres backend
 * alike (docs/control-plane.md has the figures).
 *
 * A lane holds its connection only while reads are in flight on it and gives it back to the pool when idle, so
 * nothing is held at shutdown. A read goes to the lane with the fewest reads in flight; when even
 * that lane's oldest read has been in flight for LANE_STALL_MS, the read takes a pooled connection of its own
 * (queryAsTenant), so a slow read delays only the reads that joined its lane within that time. A connection that fails other than with a server error is destroyed;
 * the reads in flight on it fail (DatabaseUnavailableError upstream) and the lane takes a fresh one next time.
 * On a pool without pipelining every read takes its own connection (queryAsTenant).
 */
export class TenantReads {
  private readonly lanes: Lane[];

  constructor(
    private readonly pool: Pool,
    lanes = 2,
  ) {
    this.lanes = Array.from({ length: lanes }, () => ({ client: undefined, acquiring: undefined, inFlight: 0, corked: false, submittedAt: [] }));
  }

  async read<R extends QueryResultRow = QueryResultRow>(tenantId: string, query: QueryConfig): Promise<QueryResult<R>> {
    assertTenantId(tenantId);
    const lane = this.lanes.reduce((best, l) => (l.inFlight < best.inFlight ? l : best));
    if (lane.inFlight > 0 && performance.now() - lane.submittedAt[0] >= LANE_STALL_MS) return queryAsTenant<R>(this.pool, tenantId, query);
    lane.inFlight++;
    let client: PoolClient;
    try {
      client = lane.client ?? (await this.acquire(lane));
    } catch (err) {
      lane.inFlight--;
      throw err;
    }
    if ((client as unknown as ClientInternals).pipeline !== true) {
      this.settle(lane, client, undefined);
      return queryAsTenant<R>(this.pool, tenantId, query);
    }
    this.cork(lane, client);
    lane.submittedAt.push(performance.now());
    return new Promise<QueryResult<R>>((resolve, reject) => {
      submitTenantRead(client, tenantId, query, (err, result) => {
        lane.submittedAt.shift();
        this.settle(lane, client, brokenBy(err));
        if (err) reject(err);
        else resolve(result as QueryResult<R>);
      });
    });
  }

  private acquire(lane: Lane): Promise<PoolClient> {
    lane.acquiring ??= this.pool.connect().then(
      (client) => {
        lane.acquiring = undefined;
        // A checked-out client has no pool listener: an error event without one would crash the process. (Its
        // reads in flight fail with the error, which is how the lane learns of it.)
        if (!listening.has(client)) {
          listening.add(client);
          client.on('error', ignore);
        }
        lane.client = client;
        return client;
      },
      (err: unknown) => {
        lane.acquiring = undefined;
        throw toDatabaseError(err, 'connect');
      },
    );
    return lane.acquiring;
  }

  /** One read on `client` done: a broken connection is destroyed now; the lane's idle one goes back to the pool. */
  private settle(lane: Lane, client: PoolClient, broken: Error | undefined): void {
    lane.inFlight--;
    // Reads still answering on a connection the lane already dropped have nothing more to release.
    if (lane.client !== client) return;
    if (broken) {
      lane.client = undefined;
      client.release(broken);
    } else {
      this.releaseIfIdle(lane, client);
    }
  }

  /** The lane's connection goes back to the pool once nothing is in flight on it and its writes are uncorked. */
  private releaseIfIdle(lane: Lane, client: PoolClient): void {
    if (lane.inFlight !== 0 || lane.corked || lane.client !== client) return;
    lane.client = undefined;
    client.release();
  }

  /** Holds the lane's writes until the end of this event-loop turn, so the reads issued in it share one write. */
  private cork(lane: Lane, client: PoolClient): void {
    if (lane.corked) return;
    const stream = (client as unknown as ClientInternals).connection?.stream;
    if (!stream?.cork || !stream.uncork) return;
    stream.cork();
    lane.corked = true;
    setImmediate(() => {
      lane.corked = false;
      stream.uncork?.();
      this.releaseIfIdle(lane, client);
    });
  }
}
