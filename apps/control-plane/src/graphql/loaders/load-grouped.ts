/** Which deployment a per-deployment read is for, and for whom: the caller's tenant travels with every key. */
export interface DeploymentKey {
  readonly tenantId: string;
  readonly deploymentId: string;
}

/** What one read of a group answers: per deployment id, its value; a deployment it does not know is left out. */
export type GroupRead<K extends DeploymentKey, V> = (group: K, deploymentIds: readonly string[]) => Promise<ReadonlyMap<string, V>>;

/**
 * Answers a DataLoader batch of per-deployment keys with one read per group, in the order of the keys. Keys are
 * grouped by tenant first, then by `argsOf` (the arguments a read takes, such as a page's limit and cursor), so a
 * read never spans two tenants or two sets of arguments; `read` gets the group's first key and its distinct
 * deployment ids. A deployment the read leaves out is answered `absent(key)`; a failed read fails its group's keys
 * and no other's.
 */
export async function loadGrouped<K extends DeploymentKey, V>(
  keys: readonly K[],
  read: GroupRead<K, V>,
  absent: (key: K) => V | Error,
  argsOf: (key: K) => readonly unknown[] = () => [],
): Promise<(V | Error)[]> {
  const groups = new Map<string, { first: K; ids: Set<string> }>();
  const groupOfKey = keys.map((key) => {
    const name = JSON.stringify([key.tenantId, ...argsOf(key)]);
    const group = groups.get(name);
    if (group) group.ids.add(key.deploymentId);
    else groups.set(name, { first: key, ids: new Set([key.deploymentId]) });
    return name;
  });
  const answers = new Map<string, ReadonlyMap<string, V> | Error>();
  await Promise.all(
    [...groups].map(async ([name, { first, ids }]) => {
      try {
        answers.set(name, await read(first, [...ids]));
      } catch (err) {
        answers.set(name, err instanceof Error ? err : new Error(String(err)));
      }
    }),
  );
  return keys.map((key, i) => {
    const answer = answers.get(groupOfKey[i]) as ReadonlyMap<string, V> | Error;
    if (answer instanceof Error) return answer;
    return answer.has(key.deploymentId) ? (answer.get(key.deploymentId) as V) : absent(key);
  });
}
