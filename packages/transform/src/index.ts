export { toSnakeCase } from './to-snake-case.js';
export { lodashSnakeCase } from './lodash-snake-case.js';
export { KEY_STYLES, keyConverter, type KeyStyle } from './key-style.js';
export { createKeyTransformer } from './key-transformer.js';
export type { FreezeMode, KeyTransformer, KeyTransformerOptions } from './key-transformer.js';
export { TransformError } from './transform-error.js';
export type { TransformErrorCode } from './transform-error.js';
