export { buildBundle, BundleBuildError, type BuildBundleOptions, type BuiltBundle } from './build-bundle';
