import { execFileSync } from 'node:child_process';

/**
 * Integration tests run against the real services. Bring them up (a no-op when they already run), so that
 * `vitest --project integration` works on its own as well as through `npm test`.
 */
export default function setup() {
  execFileSync('bash', ['scripts/services/up.sh'], { stdio: 'inherit' });
}
