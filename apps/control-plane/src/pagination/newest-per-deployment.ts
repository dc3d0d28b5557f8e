import { toPage, type Page } from './cursor';

/**
 * One statement for a page of each of many deployments (GraphQL's batched per-deployment fields): `table`'s rows with
 * `deployment_id = ANY($1)`, below the cursor `$2` (null: from the newest), the first `$3` of each deployment by
 * `idColumn` descending, ordered by deployment then newest first — what the per-deployment page reads, each.
 */
export function newestPerDeploymentSql(table: string, columns: string, idColumn: string): string {
  return `SELECT ${columns} FROM (
         SELECT ${columns}, row_number() OVER (PARTITION BY deployment_id ORDER BY ${idColumn} DESC) AS nth
         FROM ${table} WHERE deployment_id = ANY($1::text[]) AND ($2::text IS NULL OR ${idColumn} < $2)
       ) ranked
       WHERE nth <= $3 ORDER BY deployment_id, ${idColumn} DESC`;
}

/**
 * The rows of newestPerDeploymentSql (fetched with `limit + 1` per deployment) as one page per deployment found; a
 * deployment the tenant does not have is absent, one without rows has an empty page.
 */
export function pagesByDeployment<T extends { readonly deploymentId: string }>(
  found: Iterable<string>,
  rows: readonly T[],
  limit: number,
  keyOf: (row: T) => string,
): Map<string, Page<T>> {
  const byDeployment = new Map<string, T[]>([...found].map((id) => [id, []]));
  for (const row of rows) byDeployment.get(row.deploymentId)?.push(row);
  return new Map([...byDeployment].map(([id, own]) => [id, toPage(own, limit, keyOf)]));
}
