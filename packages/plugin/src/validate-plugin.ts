/**
 * A loaded plugin module checked once, at start-up, with one-line errors that name the setting:
 * an export the gateway does not know (a typo would otherwise be ignored silently) or of the wrong
 * kind stops the start.
 */
import type { GatewayPlugin } from './types.js';

/** A plugin module the gateway refuses; `message` is one line naming the setting. */
export class PluginConfigError extends Error {
  override readonly name = 'PluginConfigError';
  /** Loading again will not help: the module or the settings must change. */
  readonly retriable = false;
}

const KNOWN = ['resolvers', 'context', 'onSubscribe', 'onEvent'] as const;

/**
 * The plugin a module's namespace holds: its named exports, or its default export when that is an
 * object and there are no named ones. `source` says where it came from (`GATEWAY_PLUGIN=./p.mjs`).
 */
export function validatePlugin(namespace: unknown, source: string): GatewayPlugin {
  const fail = (what: string): never => {
    throw new PluginConfigError(`${source}: ${what}`);
  };
  if (typeof namespace !== 'object' || namespace === null) return fail(`expected a module namespace, got ${typeof namespace}`);
  const record = namespace as Record<string, unknown>;
  const named = Object.keys(record).filter((k) => k !== 'default');
  const exportsOf = named.length === 0 && isObject(record['default']) ? (record['default'] as Record<string, unknown>) : record;
  const unknown = Object.keys(exportsOf).filter((k) => k !== 'default' && !(KNOWN as readonly string[]).includes(k));
  if (unknown.length > 0) return fail(`unknown export ${unknown.map((k) => `"${k}"`).join(', ')}: a plugin exports only ${KNOWN.join(', ')}`);
  const { resolvers, context, onSubscribe, onEvent } = exportsOf;
  if (resolvers !== undefined && !isObject(resolvers)) fail(`export "resolvers" must be an object of types ({ Type: { field: resolve } }), got ${kind(resolvers)}`);
  if (context !== undefined) {
    if (!isObject(context)) fail(`export "context" must be an object of factories ({ name: (group) => backend }), got ${kind(context)}`);
    for (const [name, factory] of Object.entries(context as Record<string, unknown>)) {
      if (typeof factory !== 'function') fail(`context factory "${name}" must be a function, got ${kind(factory)}`);
    }
  }
  if (onSubscribe !== undefined && typeof onSubscribe !== 'function') fail(`export "onSubscribe" must be a function, got ${kind(onSubscribe)}`);
  if (onEvent !== undefined && typeof onEvent !== 'function') fail(`export "onEvent" must be a function, got ${kind(onEvent)}`);
  return Object.freeze({ ...(exportsOf as GatewayPlugin) });
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function kind(value: unknown): string {
  return Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value;
}
