/**
 * GATEWAY_PLUGIN: the module imported once at start-up and checked (`validatePlugin`), every
 * problem a one-line error naming the setting; main.ts exits with it. Nothing else imports plugins.
 */
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PluginConfigError, preparePlugin, validatePlugin, type PreparedPlugin } from '@wirestream/plugin';

/** Imports and checks the module `specifier` names: a path (relative to `cwd`) or a `file:` URL. */
export async function loadGatewayPlugin(specifier: string, cwd = process.cwd()): Promise<PreparedPlugin> {
  const source = `GATEWAY_PLUGIN=${specifier}`;
  const url = specifier.startsWith('file:') ? specifier : pathToFileURL(isAbsolute(specifier) ? specifier : resolve(cwd, specifier)).href;
  let namespace: unknown;
  try {
    namespace = await import(url);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new PluginConfigError(`${source}: cannot import it: ${message.split('\n')[0] ?? message}`);
  }
  return preparePlugin(validatePlugin(namespace, source), source);
}
