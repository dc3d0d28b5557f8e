import type { PendingUpgrade } from '../../deployments/deployment';

/** Says plainly what each upgrade mode does with the job's state. */
export function upgradeReason(upgrade: PendingUpgrade): string {
  const base = `upgrade to bundle ${upgrade.bundleId} (mode ${upgrade.mode})`;
  switch (upgrade.mode) {
    case 'stateless':
      return `${base}: stop, then start the new version without state`;
    case 'savepoint':
      return `${base}: the new version starts from the savepoint requested through POST /v1/deployments/{id}/savepoints/{savepointId}/restore, or without state when none was (an upgrade takes no savepoint itself: stop with a savepoint first)`;
    case 'last-state':
      return `${base}: the new version restores the job's latest checkpoint (state of operators it lacks fails the start)`;
  }
}
