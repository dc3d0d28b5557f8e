-- Up Migration
-- Latency SLOs (docs/slos.md). Three tenant-owned tables, bound by row-level security like every tenant table:
-- slos (the objectives and their last evaluation), slo_minutes (per deployment and minute, event-time latency
-- percentiles merged from the workers' HDR histograms) and slo_events (breaches and recoveries).
--
-- deployment_id carries no foreign key: deployments are another migration range, applied in any order, and a
-- deployment's minutes outlive it for as long as the retention keeps them.
CREATE TABLE slos (
  tenant_id          text NOT NULL REFERENCES tenants(id),
  id                 text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9_-]{1,64}$'),
  name               text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  deployment_id      text NOT NULL CHECK (deployment_id ~ '^[A-Za-z0-9_-]{1,64}$'),
  percentile         text NOT NULL CHECK (percentile IN ('p50', 'p95', 'p99', 'p999')),
  threshold_ms       double precision NOT NULL CHECK (threshold_ms > 0),
  target             double precision NOT NULL CHECK (target > 0 AND target < 1),
  window_minutes     integer NOT NULL CHECK (window_minutes BETWEEN 5 AND 43200),
  -- The last evaluation (NULL until the first minute with data closes).
  state              text NOT NULL DEFAULT 'NO_DATA' CHECK (state IN ('NO_DATA', 'OK', 'BREACHED')),
  good_minutes       integer NOT NULL DEFAULT 0,
  bad_minutes        integer NOT NULL DEFAULT 0,
  compliance         double precision,
  burn_rate          double precision,
  burn_rate_5m       double precision,
  evaluated_minute   timestamptz,
  created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX slos_tenant_id_idx ON slos (tenant_id, id);
CREATE INDEX slos_deployment_idx ON slos (tenant_id, deployment_id);
ALTER TABLE slos ENABLE ROW LEVEL SECURITY;
CREATE POLICY slos_isolation ON slos
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));

-- One row per deployment and closed minute (the minute a snapshot's interval ends in). Written once; a snapshot
-- that arrives after its minute closed is not merged in (logged instead).
CREATE TABLE slo_minutes (
  tenant_id      text NOT NULL REFERENCES tenants(id),
  deployment_id  text NOT NULL,
  minute         timestamptz NOT NULL CHECK (date_trunc('minute', minute) = minute),
  samples        bigint NOT NULL CHECK (samples >= 0),
  p50_ms         double precision NOT NULL,
  p95_ms         double precision NOT NULL,
  p99_ms         double precision NOT NULL,
  p999_ms        double precision NOT NULL,
  max_ms         double precision NOT NULL,
  PRIMARY KEY (tenant_id, deployment_id, minute)
);
CREATE INDEX slo_minutes_minute_idx ON slo_minutes (minute);
ALTER TABLE slo_minutes ENABLE ROW LEVEL SECURITY;
CREATE POLICY slo_minutes_isolation ON slo_minutes
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));

CREATE TABLE slo_events (
  tenant_id      text NOT NULL REFERENCES tenants(id),
  id             bigserial PRIMARY KEY,
  slo_id         text NOT NULL REFERENCES slos(id) ON DELETE CASCADE,
  kind           text NOT NULL CHECK (kind IN ('BREACH', 'RECOVERED')),
  minute         timestamptz NOT NULL,
  compliance     double precision NOT NULL,
  burn_rate      double precision NOT NULL,
  burn_rate_5m   double precision,
  reason         text NOT NULL,
  at             timestamptz NOT NULL DEFAULT now(),
  UNIQUE (slo_id, minute, kind)
);
CREATE INDEX slo_events_slo_idx ON slo_events (slo_id, id);
ALTER TABLE slo_events ENABLE ROW LEVEL SECURITY;
CREATE POLICY slo_events_isolation ON slo_events
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));

-- Down Migration
DROP TABLE slo_events;
DROP TABLE slo_minutes;
DROP TABLE slos;
