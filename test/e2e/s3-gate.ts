import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP gate in front of the real S3 server, for the job hosts only: open, it forwards bytes both ways; shut, it
 * cuts every connection and every new one at once, as an S3 endpoint that went away does. No request is faked:
 * what reaches S3 is the SDK's own traffic.
 */
export interface S3Gate {
  readonly url: string;
  shut(): void;
  open(): void;
  close(): Promise<void>;
}

export async function startS3Gate(target: string): Promise<S3Gate> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  let shut = false;
  const server = createServer((client) => {
    if (shut) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(port), hostname);
    const done = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    sockets.add(client);
    sockets.add(upstream);
    client.on('error', done).on('close', done);
    upstream.on('error', done).on('close', done);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    shut() {
      shut = true;
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    open() {
      shut = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
