-- Up Migration
-- When a key was last used, approximately: each control-plane instance notes uses in memory and writes them every
-- flush interval (60 s by default), so the value may be that much late. Null until the first flush after a use.
ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz NULL;

-- The flush carries the uses of many tenants' keys at once, and the application role may change an api_keys row only
-- under that row's app.tenant_id. One transaction per tenant (TenantDb.run) would make a flush cost as many
-- transactions as there were active tenants in the interval; instead this one function runs as its owner (the table
-- owner, to whom RLS does not apply) and does one thing in one statement: move last_used_at of the given keys
-- forward. A use counts only for the key id together with its own tenant id, is never later than now() (a skewed
-- clock cannot stamp the future), and never moves the time backward, so instances flushing the same keys at once, in
-- any order, leave the latest use. It changes no other column, returns a count only and reads nothing back: the most
-- a misuse could do is make a key look more recently used than it was. Rows are locked in id order, so two
-- instances flushing overlapping keys queue rather than deadlock; a key whose stored time is already as late is not
-- written at all. search_path is pinned so that no object planted in another schema can stand in for api_keys.
CREATE FUNCTION api_keys_mark_used(key_ids text[], tenant_ids text[], used_at timestamptz[])
RETURNS integer
LANGUAGE sql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  WITH uses AS (
    SELECT u.key_id, u.tenant_id, LEAST(max(u.at), now()) AS at
    FROM unnest(key_ids, tenant_ids, used_at) AS u(key_id, tenant_id, at)
    GROUP BY u.key_id, u.tenant_id
  ), due AS (
    SELECT k.id, u.at
    FROM public.api_keys k JOIN uses u ON k.id = u.key_id AND k.tenant_id = u.tenant_id
    WHERE k.last_used_at IS NULL OR k.last_used_at < u.at
    ORDER BY k.id
    FOR UPDATE OF k
  ), updated AS (
    UPDATE public.api_keys k SET last_used_at = GREATEST(coalesce(k.last_used_at, '-infinity'), d.at)
    FROM due d WHERE k.id = d.id
    RETURNING 1
  )
  SELECT count(*)::integer FROM updated
$$;

-- Down Migration
DROP FUNCTION api_keys_mark_used(text[], text[], timestamptz[]);
ALTER TABLE api_keys DROP COLUMN last_used_at;
