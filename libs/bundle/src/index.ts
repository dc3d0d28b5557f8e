export { buildBundle, BundleBuildError, type BuiltBundle } from './build-bundle';
