import type { PendingUpgrade } from '../../deployments/deployment';

/** Says plainly what each upgrade mode does with the job's state. */
export function upgradeReason(upgrade: PendingUpgrade): string {
  const base = `upgrade to bundle ${upgrade.bundleId} (mode ${upgrade.mode})`;
  switch (upgrade.mode) {
    case 'stateless':
      return `${base}: stop, then start the new version without state`;
    case 'savepoint':
      return `${base}: the running version stops with a savepoint and the new one starts from it (from the latest checkpoint when it cannot be taken; from the state kept at suspend when suspended); a savepoint requested through POST /v1/deployments/{id}/savepoints/{savepointId}/restore wins`;
    case 'last-state':
      return `${base}: the new version restores the job's latest checkpoint, or the state kept at suspend (state of operators it lacks fails the start)`;
  }
}
