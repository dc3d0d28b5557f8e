/**
 * @weir/sandbox: tenant code loaded where it can reach nothing — a V8 isolate (isolated-vm) inside a process under
 * Node's permission model. Today it reads a bundle's job at upload, so that its manifest is checked against its code.
 */
export { BundleInspector, type InspectOptions } from './inspect-bundle';
export { BundleRefusedError, SandboxUnavailableError, type BundleFacts } from './bundle-facts';
