/**
 * Every bench's command line: node's `parseArgs` plus `--help` (`-h`), which prints what the bench
 * does (its file's leading comment, unless given) and its options with their defaults, then exits 0.
 */
import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

export interface CliSpec<O extends Options> {
  /** First line(s) of `--help`: what it measures and how to run it. @default the script's leading comment */
  readonly usage?: string;
  readonly options: O;
  /** One line per option (by name) for `--help`; an option without one shows its type and default. */
  readonly help?: Partial<Record<keyof O & string, string>>;
  /** Printed after the options (presets, variants…). */
  readonly epilog?: string;
  readonly allowPositionals?: boolean;
}

/** The `--help` text of a spec. */
export function helpText<O extends Options>({ usage = scriptComment(), options, help = {}, epilog }: CliSpec<O>): string {
  const rows = Object.entries(options).map(([name, o]) => {
    const flag = `${o.short === undefined ? '    ' : `-${o.short}, `}--${name}${o.type === 'string' ? ' <value>' : ''}`;
    const fallback = o.default === undefined || o.default === false ? '' : ` (default ${Array.isArray(o.default) ? o.default.join(',') : String(o.default)})`;
    return [flag, `${(help as Record<string, string | undefined>)[name] ?? ''}${fallback}`.trim()] as const;
  });
  rows.push(['-h, --help', 'this text']);
  const width = Math.max(...rows.map(([flag]) => flag.length));
  const lines = rows.map(([flag, text]) => `  ${flag.padEnd(width)}  ${text}`.trimEnd());
  return `${usage.trim()}\n\noptions:\n${lines.join('\n')}\n${epilog === undefined ? '' : `\n${epilog.trim()}\n`}`;
}

/** The leading comment of the running script (tsc keeps comments in dist/), without its markers. */
function scriptComment(file = process.argv[1]): string {
  let text: string;
  try {
    text = readFileSync(file ?? '', 'utf8').replace(/^#!.*\n/, '');
  } catch {
    return `node ${file ?? '?'} [options]`;
  }
  const block = /^\s*\/\*\*?([\s\S]*?)\*\//.exec(text)?.[1];
  const lines = block === undefined ? (/^(?:\s*\/\/.*\n)+/.exec(text)?.[0] ?? '').split('\n').map((l) => l.replace(/^\s*\/\/ ?/, '')) : block.split('\n').map((l) => l.replace(/^\s*\* ?/, ''));
  return lines.join('\n').trim() || `node ${file ?? '?'} [options]`;
}

/**
 * `parseArgs` of `process.argv` (without the `--` pnpm forwards) with `--help` handled: prints
 * {@link helpText} and exits 0.
 */
export function parseCli<O extends Options>(spec: CliSpec<O>): ReturnType<typeof parseArgs<{ options: O; allowPositionals: boolean; strict: true }>> {
  const argv = process.argv.slice(2);
  if (argv[0] === '--') argv.shift();
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(helpText(spec));
    process.exit(0);
  }
  return parseArgs({ args: argv, options: spec.options, allowPositionals: spec.allowPositionals ?? false, strict: true });
}

/** An option's text as a whole number ≥ 1, or a RangeError that names the option and what it got. */
export function positiveInt(name: string, text: string | undefined): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`--${name} must be a positive integer, got ${String(text)}`);
  return n;
}

/** Several options as whole numbers ≥ 1 ({@link positiveInt}), by name: `const { events, rounds } = positiveInts(values, ['events', 'rounds'])`. */
export function positiveInts<K extends string>(values: Readonly<Partial<Record<K, unknown>>>, names: readonly K[]): Record<K, number> {
  return Object.fromEntries(names.map((name) => [name, positiveInt(name, values[name] === undefined ? undefined : String(values[name]))])) as Record<K, number>;
}
