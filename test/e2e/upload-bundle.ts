import { WORD_COUNT_OPERATORS, type BuiltJob } from '../control-plane/deployments/support';

/** Uploads a word-count bundle through POST /v1/bundles (multipart: the manifest first, then the file). */
export async function uploadBundle(
  baseUrl: string,
  token: string,
  job: BuiltJob,
  meta: { name: string; version: string; topics: string[] },
): Promise<string> {
  const manifest = {
    name: meta.name,
    version: meta.version,
    entryPoint: 'job.js',
    operatorIds: WORD_COUNT_OPERATORS,
    rulesSchema: { type: 'object' },
    defaultParallelism: 1,
    maxParallelism: 32,
    topics: meta.topics,
  };
  const form = new FormData();
  form.append('manifest', JSON.stringify(manifest));
  form.append('bundle', new Blob([job.code]), 'job.js');
  const res = await fetch(`${baseUrl}/v1/bundles`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  const body = (await res.json()) as { id?: string; sha256?: string; detail?: string };
  if (res.status !== 201 || !body.id) throw new Error(`bundle upload answered ${res.status}: ${body.detail ?? JSON.stringify(body)}`);
  if (body.sha256 !== job.sha256) throw new Error(`uploaded sha256 ${body.sha256} differs from the built ${job.sha256}`);
  return body.id;
}
