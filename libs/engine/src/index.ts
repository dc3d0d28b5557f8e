/**
 * @weir/engine: the stream engine. Job authors use the SDK (defineJob and the stream API) and the test driver;
 * the worker host uses runJob. Everything else in libs/engine is internal. Design: docs/engine.md.
 */
export * from './sdk';
export * from './keygroups';
export * from './runtime';
export * from './testing';
