import type { PendingUpgrade } from '../../deployments/deployment';

/** Says plainly what each upgrade mode does today: no savepoints or checkpoints exist before issue 5. */
export function upgradeReason(upgrade: PendingUpgrade): string {
  const base = `upgrade to bundle ${upgrade.bundleId} (mode ${upgrade.mode})`;
  switch (upgrade.mode) {
    case 'stateless':
      return `${base}: stop, then start the new version without state`;
    case 'savepoint':
      return `${base}: no savepoint taken, savepoints do not exist yet (issue 5); the new version starts without state`;
    case 'last-state':
      return `${base}: no checkpoint exists yet (issue 5); the new version starts without state`;
  }
}
