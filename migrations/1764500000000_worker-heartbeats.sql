-- Up Migration
-- What the worker protocol reports beyond identity: each worker's own heartbeat interval (the LOST threshold is
-- three of them), the sequence number of the last event applied (events can arrive out of order when several
-- control-plane instances consume them), and the subtasks the worker says it runs.
ALTER TABLE workers
  ADD COLUMN heartbeat_ms     integer NOT NULL DEFAULT 2000 CHECK (heartbeat_ms >= 100),
  ADD COLUMN last_seq         bigint  NOT NULL DEFAULT 0,
  ADD COLUMN running_subtasks jsonb   NOT NULL DEFAULT '[]'::jsonb,
  ADD COLUMN status_changed_at timestamptz NOT NULL DEFAULT now();
-- The LOST sweep only looks at live workers.
CREATE INDEX workers_alive_last_seen_idx ON workers (last_seen_at) WHERE status = 'ALIVE';

-- Down Migration
DROP INDEX workers_alive_last_seen_idx;
ALTER TABLE workers
  DROP COLUMN status_changed_at,
  DROP COLUMN running_subtasks,
  DROP COLUMN last_seq,
  DROP COLUMN heartbeat_ms;
