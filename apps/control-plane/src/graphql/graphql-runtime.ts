/**
 * graphql's runtime, loaded the way @nestjs/graphql and Apollo load it (CommonJS). graphql ships a CommonJS and an
 * ESM build; a bundler or test runner that resolves `import 'graphql'` to the ESM build loads a second copy whose
 * classes fail `instanceof` against the first ("Cannot use GraphQLScalarType from another module or realm").
 * Types still come from `import type`.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const graphqlRuntime = require('graphql') as typeof import('graphql');
