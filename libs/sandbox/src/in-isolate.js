/*
 * Runs inside the isolate (V8 only: no Node, no modules, no I/O), after the SDK has set globalThis.__weirSdk and the
 * bundle's module function has been compiled as globalThis.__weirBundle. Defines globalThis.__weirDescribe, which
 * loads the bundle the way the worker does (CommonJS, `require('@weir/engine')` served the SDK) and answers JSON:
 * { facts } or { refused: reason }. The built-ins this script calls are captured before the bundle runs; the facts
 * are what the bundle's graph says, and the host checks their shape. Plain JavaScript: it is a script for another
 * realm, not a module of Weir.
 */
(function () {
  'use strict';
  const sdk = globalThis.__weirSdk;
  globalThis.__weirSdk = undefined;
  const { isParameterizedJob, operatorIdsOf } = sdk;
  const stringify = JSON.stringify;
  const parseJson = JSON.parse;
  const assign = Object.assign;
  const ownKeys = Object.keys;
  const isArray = Array.isArray;
  const StringOf = String;

  // Node's modules and globals are absent here. A bundle may still name them as it loads (esbuild's interop,
  // `const { createHash } = require('node:crypto')`): it gets a stand-in that throws only when called.
  function unavailable(what) {
    const fail = () => {
      throw new Error(`${what} is not available while the bundle is checked at upload: the job's definition must not call Node's modules or globals as it loads (its functions may, when they run on the worker)`);
    };
    const stub = function () {};
    return new Proxy(stub, {
      get(target, prop) {
        if (typeof prop === 'symbol' || prop === '__esModule' || prop === 'then') return undefined;
        if (prop === 'prototype') return target.prototype;
        return unavailable(`${what}.${prop}`);
      },
      apply: fail,
      construct: fail,
    });
  }
  for (const name of ['setTimeout', 'setInterval', 'setImmediate', 'clearTimeout', 'clearInterval', 'clearImmediate', 'queueMicrotask', 'TextEncoder', 'TextDecoder', 'URL', 'URLSearchParams', 'fetch', 'structuredClone', 'performance']) {
    globalThis[name] = unavailable(name);
  }
  const quiet = () => undefined;
  globalThis.console = { log: quiet, info: quiet, warn: quiet, error: quiet, debug: quiet, trace: quiet };
  globalThis.process = { env: {}, argv: [], platform: 'linux', version: '', versions: {}, nextTick: unavailable('process.nextTick') };
  globalThis.global = globalThis;

  // The SDK is what the isolate has of @weir/engine; the engine's runtime (the worker's) is a stand-in here.
  const engine = new Proxy(sdk, {
    get(target, prop) {
      if (typeof prop === 'symbol' || prop in target) return target[prop];
      return prop === '__esModule' || prop === 'then' ? undefined : unavailable(`@weir/engine's ${StringOf(prop)}`);
    },
  });
  const require = (name) => (name === '@weir/engine' ? engine : unavailable(`require(${stringify(StringOf(name))})`));

  // Values a required property without a default is tried with, in order, until its parse() accepts one.
  const SAMPLES = ['1', '0', '1000', '60000', 'true', 'false', 'x'];
  function sampleConfig(parameters) {
    const topics = {};
    for (const name of ownKeys(parameters.topics || {})) topics[name] = `weir-upload-check.${name}`;
    const properties = {};
    const specs = parameters.properties || {};
    for (const name of ownKeys(specs)) {
      const spec = specs[name];
      if (spec.default !== undefined) continue;
      for (const raw of SAMPLES) {
        const parsed = spec.parse(raw);
        if (parsed && !('problem' in parsed)) {
          properties[name] = raw;
          break;
        }
      }
    }
    return { topics, properties };
  }

  const message = (err) => {
    try {
      return err instanceof Error ? `${err.name}: ${err.message}` : StringOf(err);
    } catch {
      return 'a value that cannot be shown';
    }
  };

  // The deployment's config (JSON; null: none) wins over the samples, which fill what it does not give.
  function configFor(parameters, given) {
    const sample = sampleConfig(parameters);
    if (!given) return sample;
    return { topics: assign(sample.topics, given.topics || {}), properties: assign(sample.properties, given.properties || {}) };
  }

  globalThis.__weirDescribe = function describe(configJson) {
    let given = null;
    try {
      given = parseJson(configJson);
    } catch {
      given = null;
    }
    const module = { exports: {} };
    try {
      globalThis.__weirBundle.call(module.exports, module.exports, require, module, '/bundle/job.js', '/bundle');
    } catch (err) {
      return stringify({ refused: `the bundle failed to load: ${message(err)}` });
    }
    const exported = module.exports;
    const candidate = exported && exported.default !== undefined ? exported.default : exported;
    const parameterized = isParameterizedJob(candidate);
    let job = candidate;
    if (parameterized) {
      try {
        job = candidate.instantiate(configFor(candidate.parameters, given));
      } catch (err) {
        if (given) return stringify({ refused: `the job could not be built with the deployment's config: ${message(err)}` });
        return stringify({ refused: `the job could not be built with sample values for its parameters (give each property a default): ${message(err)}` });
      }
    }
    if (!job || typeof job.name !== 'string' || typeof job.maxParallelism !== 'number' || !isArray(job.nodes)) {
      return stringify({ refused: 'the bundle must export a job definition (export default defineJob(...))' });
    }
    try {
      const rulesSchema = job.rulesSchema === undefined ? null : job.rulesSchema;
      return stringify({ facts: { jobName: job.name, maxParallelism: job.maxParallelism, operatorIds: operatorIdsOf(job), parameterized, rulesSchema } });
    } catch (err) {
      return stringify({ refused: `the job's graph could not be read: ${message(err)}` });
    }
  };
})();
