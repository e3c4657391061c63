export { z } from 'zod';
export { ConfigError, type ConfigIssue } from './config-error.js';
export {
  defineConfigSpec,
  envVar,
  type Config,
  type ConfigSpec,
  type DeepReadonly,
  type EnvVar,
  type EnvVarOptions,
} from './env-var.js';
export {
  booleanFlag,
  csvList,
  durationMs,
  hostPort,
  integer,
  port,
  url,
  type CsvListOptions,
  type DurationMsOptions,
  type IntegerOptions,
  type UrlOptions,
} from './forms.js';
export { loadConfig, type EnvSource, type LoadConfigOptions } from './load-config.js';
export { renderConfigTable } from './render-config-table.js';
export { buildOrExit, loadConfigOrExit, EXIT_CONFIG } from './load-config-or-exit.js';
