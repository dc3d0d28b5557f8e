-- Up Migration
-- The worker fleet as the control plane last heard it. Platform-level: workers belong to no tenant.
CREATE TABLE workers (
  id            text PRIMARY KEY,
  host          text NOT NULL,
  pid           integer NOT NULL,
  slots         integer NOT NULL CHECK (slots > 0),
  version       text NOT NULL,
  started_at    timestamptz NOT NULL,
  last_seen_at  timestamptz NOT NULL DEFAULT now(),
  status        text NOT NULL DEFAULT 'ALIVE' CHECK (status IN ('ALIVE', 'LOST', 'STOPPED'))
);
CREATE INDEX workers_last_seen_idx ON workers (last_seen_at);

-- Down Migration
DROP TABLE workers;
