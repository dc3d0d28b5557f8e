export { BundlesModule } from './bundles.module';
export { BundlesService } from './bundles.service';
export type { Bundle } from './bundle';
export { bundleObjectKey } from './bundle';
export type { BundleManifest } from './manifest';
export { bundleManifestSchema, MAX_KEY_GROUPS } from './manifest';
