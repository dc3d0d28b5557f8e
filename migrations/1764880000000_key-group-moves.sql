-- Up Migration
-- Live key-group moves (docs/deployments.md, "Live key-group moves"). A run's routing: per operator, the subtask
-- owning each key group, {"<operatorId>": [owner of key group 0, owner of 1, …]} (maxParallelism entries each).
-- Placement writes it with the run (contiguous ranges, or the previous run's routing where the operator's
-- parallelism and the key-group count are unchanged), each move DONE rewrites it with the run's layout, and
-- run-subtasks carries it. NULL for runs placed before this migration: their key-group ranges are their routing.
ALTER TABLE deployment_runs ADD COLUMN routing jsonb CHECK (routing IS NULL OR jsonb_typeof(routing) = 'object');

-- One row per move a tenant (or later the partitioner) asked for. PENDING until process 0's worker reports it
-- (DONE with its report, FAILED with the worker's reason) or its run ends first (FAILED, saying so). Tenant-owned
-- and bound by row-level security like every tenant table; the application role gets its privileges from the
-- owner's default privileges (scripts/db-setup.ts), as every table's.
CREATE TABLE deployment_key_group_moves (
  tenant_id      text NOT NULL REFERENCES tenants(id),
  deployment_id  text NOT NULL REFERENCES deployments(id) ON DELETE CASCADE,
  -- m + 12 hex digits of epoch ms + 12 random: time-ordered, so the newest-first list is an index scan.
  move_id        text NOT NULL CHECK (move_id ~ '^m[0-9a-f]{24}$'),
  -- The run the move is for: the worker refuses it for any other run.
  run_no         integer NOT NULL CHECK (run_no > 0),
  operator_id    text NOT NULL CHECK (operator_id ~ '^[A-Za-z0-9_-]{1,64}$'),
  -- [{"keyGroup", "fromSubtask", "toSubtask"}]: from resolved from the run's routing when the move was requested.
  moves          jsonb NOT NULL CHECK (jsonb_typeof(moves) = 'array'),
  reason         text NOT NULL DEFAULT '' CHECK (length(reason) <= 500),
  -- Who asked: the API key id (later: the partitioner or the autoscaler).
  requested_by   text NOT NULL,
  state          text NOT NULL DEFAULT 'PENDING' CHECK (state IN ('PENDING', 'DONE', 'FAILED')),
  -- The worker's MoveReport: {"moveId", "operatorId", "moved": [{keyGroup, fromSubtask, toSubtask, bytes, pauseMs}], "durationMs"}.
  report         jsonb,
  failure        text CHECK (length(failure) <= 2000),
  requested_at   timestamptz NOT NULL DEFAULT now(),
  -- When the command first went to process 0's worker.
  started_at     timestamptz,
  finished_at    timestamptz,
  PRIMARY KEY (deployment_id, move_id),
  FOREIGN KEY (deployment_id, run_no) REFERENCES deployment_runs (deployment_id, run_no) ON DELETE CASCADE,
  CHECK ((state = 'PENDING') = (finished_at IS NULL)),
  CHECK (state <> 'DONE' OR report IS NOT NULL),
  CHECK (state <> 'FAILED' OR failure IS NOT NULL)
);
-- Moves are serialised per deployment: at most one in flight, whichever instance or caller inserts it.
CREATE UNIQUE INDEX deployment_key_group_moves_in_flight ON deployment_key_group_moves (deployment_id) WHERE state = 'PENDING';
ALTER TABLE deployment_key_group_moves ENABLE ROW LEVEL SECURITY;
CREATE POLICY deployment_key_group_moves_isolation ON deployment_key_group_moves
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));

-- Down Migration
DROP TABLE deployment_key_group_moves;
ALTER TABLE deployment_runs DROP COLUMN routing;
