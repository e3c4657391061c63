/**
 * What a scenario of the fan-out bench is: a name, a description, the options it reads (with their
 * defaults) and how it runs. main.ts parses the options every registered scenario declares, prints
 * them on --help and runs the chosen scenarios in registry order (scenarios.ts).
 */
import { parseArgs, type ParseArgsOptionDescriptor } from 'node:util';
import type { WirestreamSchema } from '@wirestream/schema';
import { positiveInt } from '@wirestream/bench-kit';
import type { RunContext, RunSpec, StackRun } from './run-stack.js';
import type { StackName } from './servers.js';

/** One command-line option. Without `arg` it is a boolean flag. */
export interface OptionSpec {
  readonly help: string;
  /** The value's placeholder on --help (`N`, `LIST`, `EV/S`); absent for a boolean flag. */
  readonly arg?: string;
  /** The default of a full run; absent when the scenario works out a default itself (the help says how). */
  readonly default?: string;
  /** The default under --quick, when it differs. */
  readonly quick?: string;
}

export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

/** The parsed options: what was given, else the default of this run (--quick's where one is declared). */
export interface OptionValues {
  string(name: string): string | undefined;
  /** The value or its default; throws naming the option when there is neither. */
  required(name: string): string;
  /** A finite number ≥ 0; throws naming the option otherwise. */
  number(name: string): number;
  /** A whole number ≥ 1 (a count of rounds, events, sockets); throws naming the option otherwise. */
  positiveInt(name: string): number;
  /** A comma-separated list of numbers ≥ 0. */
  numbers(name: string): number[];
  flag(name: string): boolean;
  /** Whether the option was on the command line. */
  given(name: string): boolean;
}

/** The runner's own options, read once and shared by every scenario. */
export interface CommonOptions {
  readonly quick: boolean;
  /** --stacks, checked against the known stacks. */
  readonly stacks: readonly StackName[];
  readonly repeat: number;
  readonly workers: number | undefined;
  /** --drain-timeout in ms, when given: it replaces each scenario's own drain deadline. */
  readonly drainOverrideMs: number | undefined;
  /** How long a server sits idle before and after its sockets connect. */
  readonly idleMs: number;
  /** --base-gateway: the checkout measured as ours-base. */
  readonly baseGateway: string | undefined;
  /** The demo listings the events are spread over (and `where` filters pick from). */
  readonly filterKeys: readonly string[];
}

/** What a running scenario gets: the run context on the shared redis-server, the schema, the options. */
export interface ScenarioEnv {
  readonly ctx: RunContext;
  readonly schema: WirestreamSchema;
  readonly common: CommonOptions;
  /** The SVG file name of one of the report's charts (`fanout-saturation.svg`). */
  svgName(chart: string): string;
}

/** A report section, its charts, and the stack runs behind it (read by `targets`). */
export interface ScenarioOutput {
  readonly markdown: string;
  readonly svgs: readonly (readonly [name: string, svg: string])[];
  readonly runs?: readonly StackRun[];
}

/** A scenario whose options were read and checked: nothing has started yet. */
export interface PreparedScenario {
  /** The most events it publishes: the corpus is prepared once for the whole run. */
  readonly events: number;
  run(env: ScenarioEnv): Promise<ScenarioOutput>;
}

export interface Scenario {
  readonly name: string;
  /** One or two lines for --help. */
  readonly description: string;
  /** The options this scenario reads (prefixed with its name, so they never clash). */
  readonly options: OptionSpecs;
  /** The report's file name when every chosen scenario shares it (default `fanout`). */
  readonly report?: string;
  /** Reads and checks the options, failing fast on a contradiction before any process starts. */
  prepare(options: OptionValues, common: CommonOptions): PreparedScenario;
  /**
   * Target lines checked against the runs of the whole report (runs by scenario name); scenarios
   * sharing one function get its lines once, on top of the report.
   */
  readonly targets?: (runs: ReadonlyMap<string, readonly StackRun[]>) => string[];
}

/** A prepared scenario whose report section is text only (no chart): `section` runs it and returns the markdown. */
export function textSection(events: number, section: (env: ScenarioEnv) => Promise<string>): PreparedScenario {
  return { events, run: async (env) => ({ markdown: await section(env), svgs: [] }) };
}

/** The spec with --workers when given (the load client picks its own count otherwise). */
export function withWorkers(common: CommonOptions, spec: Omit<RunSpec, 'workers'>): RunSpec {
  return common.workers === undefined ? spec : { ...spec, workers: common.workers };
}

/** --drain-timeout when given, else the scenario's own deadline. */
export function drainTimeoutMs(common: CommonOptions, fullMs: number, quickMs = fullMs): number {
  return common.drainOverrideMs ?? (common.quick ? quickMs : fullMs);
}

/**
 * A bench measured in this process (micro.ts registers each under its name and runs one per call):
 * options declared as a scenario's; `run` reads them, measures and returns what it prints.
 */
export interface MicroBench {
  /** One or two lines for --help. */
  readonly description: string;
  /** Node flags it must run under (`--expose-gc`), for --help; it fails naming them without. */
  readonly nodeFlags?: string;
  readonly options: OptionSpecs;
  run(options: OptionValues): Promise<string>;
}

/** A whole-number option (`N`) with its default and help. */
export const countOption = (fallback: number, help: string): OptionSpec => ({ arg: 'N', default: String(fallback), help });

/** The command line parsed against the declared options (a flag without `arg`, else a value), positionals kept. */
export function parseDeclared(specs: OptionSpecs, args?: string[]): { values: ParsedValues; positionals: string[] } {
  const options: Record<string, ParseArgsOptionDescriptor> = Object.fromEntries(
    Object.entries(specs).map(([name, spec]) => [name, { type: spec.arg === undefined ? 'boolean' : 'string' }]),
  );
  return parseArgs({ ...(args === undefined ? {} : { args }), options, allowPositionals: true });
}

/** What node:util's parseArgs returns (no option here is `multiple`, so no arrays arrive). */
export type ParsedValues = Readonly<Record<string, string | boolean | readonly (string | boolean)[] | undefined>>;

/** Option values over the given command line, with the declared defaults (--quick's when `quick`). */
export function createOptionValues(specs: OptionSpecs, given: ParsedValues, quick: boolean): OptionValues {
  const specOf = (name: string): OptionSpec => {
    const spec = specs[name];
    if (!spec) throw new Error(`no option --${name} is declared (a scenario reads an option it does not list)`);
    return spec;
  };
  const string = (name: string): string | undefined => {
    const spec = specOf(name);
    const value = given[name];
    if (typeof value === 'string') return value;
    return quick && spec.quick !== undefined ? spec.quick : spec.default;
  };
  const toNumber = (name: string, text: string | undefined): number => {
    const n = Number(text);
    if (text === undefined || text.trim() === '' || !Number.isFinite(n) || n < 0) {
      throw new RangeError(`--${name}: expected a number ≥ 0, got ${text === undefined ? 'nothing (it has no default)' : `"${text}"`}`);
    }
    return n;
  };
  const required = (name: string): string => {
    const value = string(name);
    if (value === undefined) throw new RangeError(`--${name} is required here (it has no default)`);
    return value;
  };
  return {
    string,
    required,
    number: (name) => toNumber(name, string(name)),
    positiveInt: (name) => positiveInt(name, string(name)),
    numbers: (name) => required(name).split(',').map((part) => toNumber(name, part)),
    flag: (name) => {
      specOf(name);
      return given[name] === true;
    },
    given: (name) => {
      specOf(name);
      return given[name] !== undefined;
    },
  };
}

/** `--name ARG   help (default X; --quick Y)`, wrapped under the option. */
export function helpLines(specs: OptionSpecs, indent: string): string[] {
  return Object.entries(specs).map(([name, spec]) => {
    const flag = `--${name}${spec.arg === undefined ? '' : ` ${spec.arg}`}`;
    const defaults =
      spec.default === undefined ? '' : ` (default ${spec.default}${spec.quick !== undefined && spec.quick !== spec.default ? `; --quick ${spec.quick}` : ''})`;
    return `${indent}${flag.padEnd(30)} ${spec.help}${defaults}`;
  });
}
