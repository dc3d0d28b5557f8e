/**
 * Creates Weir's database and its two roles on the machine's Postgres, then applies migrations.
 * - the owner role owns the schema and runs migrations;
 * - the application role is not an owner and cannot bypass row-level security, so RLS policies bind it.
 * Idempotent, and serialised by an advisory lock so that parallel runs do not race.
 */
import { spawnSync } from 'node:child_process';
import { Client } from 'pg';
import { loadConfig } from '@weir/config';

const SETUP_LOCK = 0x7765_6972; // "weir"

function credentials(url: string) {
  const u = new URL(url);
  return { user: decodeURIComponent(u.username), password: decodeURIComponent(u.password), database: u.pathname.slice(1) };
}

const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;
const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;

async function ensureRole(admin: Client, name: string, password: string, attributes: string) {
  const exists = await admin.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [name]);
  const verb = exists.rowCount ? 'ALTER' : 'CREATE';
  await admin.query(`${verb} ROLE ${ident(name)} WITH LOGIN PASSWORD ${literal(password)} ${attributes}`);
}

async function main() {
  const config = loadConfig();
  const owner = credentials(config.WEIR_PG_OWNER_URL);
  const app = credentials(config.WEIR_PG_URL);
  if (owner.database !== app.database) throw new Error('WEIR_PG_URL and WEIR_PG_OWNER_URL must name the same database');

  const admin = new Client({ connectionString: config.WEIR_PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query('SELECT pg_advisory_lock($1)', [SETUP_LOCK]);
    await ensureRole(admin, owner.user, owner.password, 'NOSUPERUSER NOCREATEROLE');
    await ensureRole(admin, app.user, app.password, 'NOSUPERUSER NOCREATEROLE NOBYPASSRLS');
    const db = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [owner.database]);
    if (!db.rowCount) await admin.query(`CREATE DATABASE ${ident(owner.database)} OWNER ${ident(owner.user)}`);
  } finally {
    await admin.query('SELECT pg_advisory_unlock($1)', [SETUP_LOCK]).catch(() => undefined);
    await admin.end();
  }

  // As the owner: the app role may use what the owner creates, now and in future migrations, but owns nothing.
  const ownerClient = new Client({ connectionString: config.WEIR_PG_OWNER_URL });
  await ownerClient.connect();
  try {
    await ownerClient.query(`
      GRANT CONNECT ON DATABASE ${ident(owner.database)} TO ${ident(app.user)};
      GRANT USAGE ON SCHEMA public TO ${ident(app.user)};
      ALTER DEFAULT PRIVILEGES FOR ROLE ${ident(owner.user)} IN SCHEMA public
        GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ${ident(app.user)};
      ALTER DEFAULT PRIVILEGES FOR ROLE ${ident(owner.user)} IN SCHEMA public
        GRANT USAGE, SELECT ON SEQUENCES TO ${ident(app.user)};`);
  } finally {
    await ownerClient.end();
  }

  // node-pg-migrate takes its own advisory lock, so concurrent migrators wait rather than race.
  const result = spawnSync(
    process.execPath,
    ['node_modules/node-pg-migrate/bin/node-pg-migrate.js', 'up', '--migrations-dir', 'migrations',
      '--migrations-table', 'pgmigrations', '--no-check-order', '--database-url-var', 'WEIR_PG_OWNER_URL', '--no-verbose'],
    { stdio: 'inherit', env: { ...process.env, WEIR_PG_OWNER_URL: config.WEIR_PG_OWNER_URL } },
  );
  if (result.status !== 0) throw new Error(`migrations failed (exit ${result.status})`);
}

main().catch((err) => {
  console.error(`[db-setup] ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
