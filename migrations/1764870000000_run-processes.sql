-- Up Migration
-- A run's layout (docs/deployments.md, "Placement and dispatch"): the job host processes it runs in, one per slot,
-- each on one worker: [{"index": i, "workerId": w, "subtasks": [{"operatorId", "subtask", "keyGroups"}]}], index
-- 0 .. count-1 in order. worker_id stays process 0's worker (it leads the run's checkpoints and takes its savepoints)
-- and slots the process count, so what read them before keeps its meaning. Runs placed before this migration have
-- '[]': the whole job in one process on worker_id, holding `slots` slots there.
ALTER TABLE deployment_runs ADD COLUMN processes jsonb NOT NULL DEFAULT '[]'::jsonb CHECK (jsonb_typeof(processes) = 'array');

-- Slots per worker from the layouts: each process holds one slot on its own worker (a run over two workers holds
-- slots on both, not all of them on process 0's). Same signature as before, so callers need no change; still
-- SECURITY DEFINER answering slot counts only, never rows (see 1764620000000_deployments.sql).
CREATE OR REPLACE FUNCTION weir_worker_slots_in_use()
RETURNS TABLE (worker_id text, slots bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT held.worker_id, sum(held.slots)::bigint FROM (
    SELECT p.process->>'workerId' AS worker_id, 1 AS slots
    FROM deployment_runs r CROSS JOIN LATERAL jsonb_array_elements(r.processes) AS p(process)
    WHERE r.ended_at IS NULL
    UNION ALL
    SELECT r.worker_id, r.slots FROM deployment_runs r WHERE r.ended_at IS NULL AND r.processes = '[]'::jsonb
  ) held
  GROUP BY held.worker_id
$$;

-- Down Migration
CREATE OR REPLACE FUNCTION weir_worker_slots_in_use()
RETURNS TABLE (worker_id text, slots bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT r.worker_id, sum(r.slots) FROM deployment_runs r WHERE r.ended_at IS NULL GROUP BY r.worker_id
$$;
ALTER TABLE deployment_runs DROP COLUMN processes;
