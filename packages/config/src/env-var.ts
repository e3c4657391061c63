import type { z } from 'zod';

/**
 * One environment variable of a service's configuration: its name, how its string is parsed,
 * and what happens when it is absent. Built with {@link envVar}; read by `loadConfig` and
 * `renderConfigTable`.
 *
 * `T` is the type the variable has in the loaded config (`X | undefined` for optional ones).
 */
export interface EnvVar<T> {
  /** Environment variable name, e.g. `GATEWAY_PORT`. */
  readonly name: string;
  /** Parses the raw string (from the environment or the config file). */
  readonly schema: z.ZodType;
  /** One line for operators; rendered into the README table. */
  readonly description: string;
  /** Masked in errors and in the rendered table. */
  readonly secret: boolean;
  /**
   * What happens when the variable is absent (unset or blank):
   * `'required'` reports a problem, `'optional'` yields `undefined`, `'default'` yields {@link default}.
   */
  readonly presence: 'required' | 'optional' | 'default';
  /** The parsed value used when absent; present only when `presence` is `'default'`. */
  readonly default?: T;
}

/** Options shared by every form of {@link envVar}. */
export interface EnvVarOptions<S extends z.ZodType> {
  /** Environment variable name: upper case letters, digits and `_`, starting with a letter. */
  name: string;
  /** Parses the raw string. Use the helpers (`port()`, `url()`, `csvList()`…) or `z.coerce.*`. */
  schema: S;
  /** What the variable is for, in one line (goes into the README table). */
  description: string;
  /**
   * Mask the value in error messages and the rendered table.
   * @default false
   */
  secret?: boolean;
}

// Upper snake case is what every shell, Kubernetes manifest and .env parser accepts unquoted.
const ENV_NAME = /^[A-Z][A-Z0-9_]*$/;

/**
 * Declares one environment variable.
 *
 * - with `default`: absent → the default (the already-parsed value; it is not re-validated).
 * - with `optional: true`: absent → `undefined`, typed `T | undefined`.
 * - with neither: absent → a configuration problem.
 *
 * Blank values (`FOO=` or only spaces) count as absent: Kubernetes and .env files commonly
 * produce them for "not set".
 */
export function envVar<S extends z.ZodType>(
  options: EnvVarOptions<S> & { default: z.output<S> },
): EnvVar<z.output<S>>;
export function envVar<S extends z.ZodType>(
  options: EnvVarOptions<S> & { optional: true },
): EnvVar<z.output<S> | undefined>;
export function envVar<S extends z.ZodType>(options: EnvVarOptions<S>): EnvVar<z.output<S>>;
export function envVar(
  options: EnvVarOptions<z.ZodType> & { default?: unknown; optional?: boolean },
): EnvVar<unknown> {
  const { name, schema, description, secret = false } = options;
  if (!ENV_NAME.test(name)) {
    throw new TypeError(
      `envVar: name must be upper snake case (A-Z, 0-9, _; starting with a letter), received ${JSON.stringify(name)}`,
    );
  }
  const hasDefault = 'default' in options && options.default !== undefined;
  if (hasDefault && options.optional === true) {
    throw new TypeError(
      `envVar ${name}: give either a default or optional: true, not both (a variable with a default is never undefined)`,
    );
  }
  if (hasDefault) {
    return Object.freeze({ name, schema, description, secret, presence: 'default', default: options.default });
  }
  return Object.freeze({
    name,
    schema,
    description,
    secret,
    presence: options.optional === true ? 'optional' : 'required',
  });
}

/** A service's configuration: property name → variable. */
export type ConfigSpec = Readonly<Record<string, EnvVar<unknown>>>;

/** Deeply readonly view of a value, matching the deep freeze `loadConfig` applies. */
export type DeepReadonly<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends ReadonlyArray<infer E>
    ? ReadonlyArray<DeepReadonly<E>>
    : T extends object
      ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
      : T;

/** The loaded configuration of a spec: `Config<typeof spec>`. */
export type Config<S extends ConfigSpec> = {
  readonly [K in keyof S]: S[K] extends EnvVar<infer T> ? DeepReadonly<T> : never;
};

/**
 * Declares a service's configuration. Returns the spec unchanged (frozen) after checking that
 * no two properties read the same variable.
 */
export function defineConfigSpec<S extends ConfigSpec>(spec: S): S {
  const seen = new Map<string, string>();
  for (const [key, variable] of Object.entries(spec)) {
    const other = seen.get(variable.name);
    if (other !== undefined) {
      throw new TypeError(
        `defineConfigSpec: ${variable.name} is read by both "${other}" and "${key}"; each variable must belong to one property`,
      );
    }
    seen.set(variable.name, key);
  }
  return Object.freeze(spec);
}
