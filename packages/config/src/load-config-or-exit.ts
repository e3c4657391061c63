import { ConfigError } from './config-error.js';
import type { Config, ConfigSpec } from './env-var.js';
import { loadConfig, type EnvSource, type LoadConfigOptions } from './load-config.js';

/** Exit status for a configuration error (sysexits.h EX_CONFIG): orchestrators should not retry. */
export const EXIT_CONFIG = 78;

/**
 * For a process entry point: {@link loadConfig}, or print every problem to stderr and exit with
 * {@link EXIT_CONFIG}. Other errors are rethrown (they are bugs, not configuration).
 */
export function loadConfigOrExit<S extends ConfigSpec>(spec: S, env: EnvSource, options: LoadConfigOptions = {}): Config<S> {
  try {
    return loadConfig(spec, env, options);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(EXIT_CONFIG);
    }
    throw err;
  }
}

/**
 * For a process entry point: the value of `build` (e.g. client options made from several settings
 * and the files they name), or every problem of its {@link ConfigError} on stderr and exit with
 * {@link EXIT_CONFIG}. Other errors are rethrown.
 */
export async function buildOrExit<T>(build: () => Promise<T>): Promise<T> {
  try {
    return await build();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(EXIT_CONFIG);
    }
    throw err;
  }
}
