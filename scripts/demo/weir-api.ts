/** The control plane's public REST API as the demo uses it: what a user's script would do, nothing internal. */
import { waitFor } from './processes';

export class ApiError extends Error {
  override readonly name = 'ApiError';
}

export interface Api {
  request<T>(method: string, path: string, body?: unknown, expect?: number): Promise<T>;
  upload<T>(path: string, fields: Record<string, string>, file: { field: string; name: string; content: Buffer }): Promise<T>;
}

export function api(baseUrl: string, token: string): Api {
  const headers = { authorization: `Bearer ${token}` };
  async function answer<T>(method: string, path: string, res: Response, expect: number): Promise<T> {
    const body = (await res.json().catch(() => null)) as T & { detail?: string; errors?: { name: string; reason: string }[] };
    if (res.status !== expect) {
      const why = body?.errors?.map((e) => `${e.name}: ${e.reason}`).join('; ') || body?.detail || JSON.stringify(body);
      throw new ApiError(`${method} ${path} answered ${res.status}: ${why}`);
    }
    return body;
  }
  return {
    async request<T>(method: string, path: string, body?: unknown, expect = 200): Promise<T> {
      const res = await fetch(`${baseUrl}${path}`, {
        method,
        headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(15_000),
      });
      return answer<T>(method, path, res, expect);
    },
    async upload<T>(path: string, fields: Record<string, string>, file: { field: string; name: string; content: Buffer }): Promise<T> {
      const form = new FormData();
      for (const [name, value] of Object.entries(fields)) form.append(name, value);
      form.append(file.field, new Blob([new Uint8Array(file.content)]), file.name);
      const res = await fetch(`${baseUrl}${path}`, { method: 'POST', headers, body: form, signal: AbortSignal.timeout(30_000) });
      return answer<T>('POST', path, res, 201);
    },
  };
}

export interface Rollout {
  readonly id: string;
  readonly version: number;
  readonly phase: string;
  readonly acknowledgedSubtasks: number;
  readonly totalSubtasks: number | null;
  readonly message: string | null;
}

/** Publishes a rule set as the deployment's next version and waits until every routing subtask applies it. */
export async function rollOutRules(client: Api, deploymentId: string, rules: readonly object[]): Promise<{ rollout: Rollout; tookMs: number }> {
  const started = Date.now();
  const created = await client.request<{ version: number; rollout: Rollout }>('POST', `/v1/deployments/${deploymentId}/rules`, { rules }, 201);
  const rollout = await waitFor(`rule version ${created.version} to be applied by every subtask`, 60_000, async () => {
    const r = await client.request<Rollout>('GET', `/v1/deployments/${deploymentId}/rules/rollouts/${created.rollout.id}`);
    return r.phase === 'ROLLING_OUT' ? undefined : r;
  }, 50);
  if (rollout.phase !== 'ACTIVE') throw new ApiError(`the rollout of version ${created.version} ended ${rollout.phase}: ${rollout.message}`);
  return { rollout, tookMs: Date.now() - started };
}
