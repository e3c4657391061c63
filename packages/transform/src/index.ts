export { toSnakeCase } from './to-snake-case.js';
export { createKeyTransformer } from './key-transformer.js';
export type { FreezeMode, KeyTransformer, KeyTransformerOptions } from './key-transformer.js';
export { TransformError } from './transform-error.js';
export type { TransformErrorCode } from './transform-error.js';
