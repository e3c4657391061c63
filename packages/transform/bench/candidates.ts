import cloneDeep from 'lodash/cloneDeep.js';
import isPlainObject from 'lodash/isPlainObject.js';
import mapKeys from 'lodash/mapKeys.js';
import mapValues from 'lodash/mapValues.js';
import memoize from 'lodash/memoize.js';
import snakeCase from 'lodash/snakeCase.js';
import { toSnakeCase } from '../src/index.js';

type Json = unknown;

/** The field's version: deep clone, then rebuild everything with lodash, converting every key. */
export function createLodashTransform(convert: (key: string) => string): (value: Json) => Json {
  const deep = (value: Json): Json => {
    if (Array.isArray(value)) return value.map(deep);
    if (isPlainObject(value)) {
      return mapValues(mapKeys(value as object, (_v, key) => convert(key)), deep);
    }
    return value;
  };
  return (value) => deep(cloneDeep(value));
}

export const lodashBaseline = createLodashTransform(snakeCase);
export const lodashMemoized = createLodashTransform(memoize(snakeCase));

/**
 * The straightforward hand-written version (no lodash, memoized like ours) that rebuilds every
 * object and array: what in-place arrays and keeping unchanged objects save.
 */
export function createRebuildEverything(convert: (key: string) => string): (value: Json) => Json {
  const deep = (value: Json): Json => {
    if (Array.isArray(value)) return value.map(deep);
    if (typeof value === 'object' && value !== null) {
      const out: Record<string, Json> = {};
      for (const key of Object.keys(value)) out[convert(key)] = deep((value as Record<string, Json>)[key]);
      return out;
    }
    return value;
  };
  return deep;
}

/**
 * `JSON.parse` with a reviver that rebuilds each object with converted keys (V8 calls the reviver
 * bottom-up for every value, so each object is built twice).
 */
export function createReviverParse(convert: (key: string) => string): (text: string) => Json {
  const reviver = function (this: unknown, _key: string, value: Json): Json {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
    const out: Record<string, Json> = {};
    for (const key in value) {
      const snake = convert(key);
      if (snake === '__proto__') {
        Object.defineProperty(out, snake, { value: (value as Record<string, Json>)[key], enumerable: true, writable: true, configurable: true });
      } else {
        out[snake] = (value as Record<string, Json>)[key];
      }
    }
    return out;
  };
  return (text) => JSON.parse(text, reviver) as Json;
}

/**
 * Rewrites keys on the text with one regex pass (a string followed by `:` is a key). It does not
 * validate the JSON nor detect collisions: shown for speed only.
 */
export function createRegexRewrite(convert: (key: string) => string): (text: string) => string {
  const token = /"((?:[^"\\]|\\.)*)"(\s*:)?/g;
  return (text) =>
    text.replace(token, (match, body: string, colon: string | undefined) =>
      colon === undefined || body.includes('\\') ? match : `"${convert(body)}"${colon}`,
    );
}

export { toSnakeCase };
