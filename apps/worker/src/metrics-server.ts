import { createServer, type Server } from 'node:http';
import { PROMETHEUS_CONTENT_TYPE, renderPrometheus, type SubtaskMetricsSnapshot } from '@weir/metrics';

/** GET /metrics in Prometheus text format: the latest snapshot of every subtask this worker runs. */
export function startMetricsServer(host: string, port: number, snapshots: () => SubtaskMetricsSnapshot[]): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('only GET /metrics is served here\n');
      return;
    }
    res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE }).end(renderPrometheus(snapshots()));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}
