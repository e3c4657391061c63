import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { ConfigError, type ConfigIssue } from './config-error.js';
import type { Config, ConfigSpec, EnvVar } from './env-var.js';

/** Where variables are read from: `process.env` or any plain record (tests). */
export type EnvSource = Readonly<Record<string, string | undefined>>;

/** Options of {@link loadConfig}. */
export interface LoadConfigOptions {
  /**
   * Path of a JSON file whose top-level keys are variable names, e.g. `{ "GATEWAY_PORT": 4000 }`.
   * Values may be strings, numbers, booleans or arrays of those (joined with `,`), and are parsed
   * exactly like the environment's strings. The environment wins over the file. Keys that are not
   * variables of the spec are reported as problems (they are usually typos).
   * @default undefined (no file)
   */
  file?: string | undefined;
}

// Long values (certificates, JSON blobs) would drown the message; the start is enough to spot
// what went wrong.
const MAX_SHOWN_CHARS = 80;
const MASK = '****';

/**
 * Parses a service's configuration once, at the edge. Returns a deeply frozen object typed from
 * the spec, or throws one {@link ConfigError} listing every problem.
 *
 * @example
 * const config = loadConfig(spec, process.env, { file: process.env.WIRESTREAM_CONFIG_FILE });
 */
export function loadConfig<S extends ConfigSpec>(spec: S, env: EnvSource, options: LoadConfigOptions = {}): Config<S> {
  const { file } = options;
  const issues: ConfigIssue[] = [];
  const fileValues = file === undefined ? new Map<string, string>() : readConfigFile(file, spec, issues);
  const result: Record<string, unknown> = {};

  for (const [key, variable] of Object.entries(spec)) {
    let raw = present(env[variable.name]);
    let source: 'env' | 'file' = 'env';
    if (variable.secret) {
      const fromFile = readSecretFile(key, variable, env, raw !== undefined, issues);
      if (fromFile === null) continue; // reported
      raw ??= fromFile;
    }
    if (raw === undefined) {
      raw = fileValues.get(variable.name);
      source = 'file';
    }
    if (raw === undefined) {
      if (variable.presence === 'default') result[key] = variable.default;
      else if (variable.presence === 'optional') result[key] = undefined;
      else issues.push(missing(key, variable));
      continue;
    }
    const parsed = variable.schema.safeParse(raw);
    if (parsed.success) {
      result[key] = parsed.data;
    } else {
      issues.push({
        variable: variable.name,
        key,
        source,
        problem: describeIssues(parsed.error.issues, variable.secret ? raw : undefined),
        received: variable.secret ? MASK : show(raw),
      });
    }
  }

  if (issues.length > 0) throw new ConfigError(issues);
  return deepFreeze(result) as Config<S>;
}

/** Suffix of the variable naming a file that holds a secret's value (the Kubernetes-secret convention). */
export const SECRET_FILE_SUFFIX = '_FILE';

/**
 * A secret may come from `<NAME>_FILE` (a mounted Kubernetes secret) instead of `<NAME>`: the
 * file's content without its trailing newline. Undefined when not set; null when a problem was
 * reported (both set, unreadable, empty). The value is never shown.
 */
function readSecretFile(key: string, variable: EnvVar<unknown>, env: EnvSource, alsoInEnv: boolean, issues: ConfigIssue[]): string | undefined | null {
  const fileVariable = `${variable.name}${SECRET_FILE_SUFFIX}`;
  const path = present(env[fileVariable]);
  if (path === undefined) return undefined;
  const issue = (problem: string): null => {
    issues.push({ variable: fileVariable, key, source: 'env', problem, received: show(path) });
    return null;
  };
  if (alsoInEnv) return issue(`set ${variable.name} or ${fileVariable}, not both`);
  let text: string;
  try {
    text = readFileSync(path, 'utf8').replace(/\r?\n$/, '');
  } catch (error) {
    return issue(`could not read the file holding ${variable.name}: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (text.trim() === '') return issue(`the file holding ${variable.name} is empty`);
  return text;
}

// Blank counts as absent: Kubernetes `value: ""` and `FOO=` lines in .env files mean "not set".
function present(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

function missing(key: string, variable: EnvVar<unknown>): ConfigIssue {
  const expected = variable.schema.description ?? describeEnum(variable.schema);
  const what = variable.description === '' ? '' : ` (${variable.description})`;
  return {
    variable: variable.name,
    key,
    source: 'env',
    problem: `required but not set${expected === undefined ? '' : `; expected ${expected}`}${what}`,
    received: undefined,
  };
}

function describeEnum(schema: z.ZodType): string | undefined {
  // z.enum exposes its options; other plain zod schemas get their expected form from the
  // issue message when a value is wrong.
  const options = (schema as { options?: unknown }).options;
  return Array.isArray(options) ? `one of ${options.map(String).join(', ')}` : undefined;
}

function describeIssues(issues: readonly z.core.$ZodIssue[], secret: string | undefined): string {
  const text = issues
    .map((issue) => (issue.path.length === 0 ? issue.message : `entry ${issue.path.join('.')}: ${issue.message}`))
    .join('; ');
  // Zod's messages do not echo input today; this keeps a custom refinement from leaking a secret.
  return secret === undefined ? text : text.split(secret).join(MASK);
}

function show(raw: string): string {
  const shown = raw.length > MAX_SHOWN_CHARS ? `${raw.slice(0, MAX_SHOWN_CHARS)}…` : raw;
  return JSON.stringify(shown);
}

function readConfigFile(path: string, spec: ConfigSpec, issues: ConfigIssue[]): Map<string, string> {
  const values = new Map<string, string>();
  const fileIssue = (problem: string): void => {
    issues.push({ variable: path, key: undefined, source: 'file', problem, received: undefined });
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    fileIssue(`config file could not be read as JSON: ${error instanceof Error ? error.message : String(error)}`);
    return values;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    fileIssue('config file must hold a JSON object keyed by variable name, e.g. {"GATEWAY_PORT": 4000}');
    return values;
  }
  const known = new Map(Object.values(spec).map((variable) => [variable.name, variable]));
  for (const [name, value] of Object.entries(parsed)) {
    const variable = known.get(name);
    if (variable === undefined) {
      issues.push({
        variable: name,
        key: undefined,
        source: 'file',
        problem: `config file ${path} sets a variable this service does not read (typo?)`,
        received: undefined,
      });
      continue;
    }
    const text = toEnvString(value);
    if (text === undefined) {
      issues.push({
        variable: name,
        key: undefined,
        source: 'file',
        problem: `config file ${path}: value must be a string, number, boolean or an array of those`,
        received: variable.secret ? MASK : typeof value === 'object' ? (value === null ? 'null' : 'an object') : typeof value,
      });
      continue;
    }
    const kept = present(text);
    if (kept !== undefined) values.set(name, kept);
  }
  return values;
}

function toEnvString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.every((entry) => ['string', 'number', 'boolean'].includes(typeof entry))) {
    return value.join(',');
  }
  return undefined;
}

// Object.freeze instead of copies: the config is shared by every module and must not change
// after startup, and freezing costs nothing per read (DESIGN §2: no deep clones).
function deepFreeze<T>(value: T, seen = new WeakSet<object>()): T {
  if (typeof value === 'object' && value !== null && !seen.has(value)) {
    seen.add(value);
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child, seen);
  }
  return value;
}
