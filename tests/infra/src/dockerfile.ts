// A Dockerfile parser for the subset our Dockerfiles use, precise enough to check their invariants
// and to run their build stages without a Docker engine (docker-build.ts).

/** One instruction, continuation lines joined, comments dropped. */
export interface Instruction {
  /** Upper-case keyword: FROM, RUN, COPY, … */
  readonly keyword: string;
  /** `--name=value` flags before the arguments (`--mount=…`, `--from=…`, `--interval=…`). */
  readonly flags: ReadonlyMap<string, string>;
  /** The arguments after the flags, as written (shell form) … */
  readonly args: string;
  /** … or parsed, when they are a JSON array (exec form). */
  readonly execForm: readonly string[] | undefined;
  /** 1-based line of the instruction's first line, for messages. */
  readonly line: number;
}

/** A build stage: `FROM <image> [AS <name>]` and the instructions up to the next FROM. */
export interface Stage {
  readonly name: string | undefined;
  /** The image or earlier stage it starts from, as written (`${NODE_IMAGE}`, `base`). */
  readonly from: string;
  readonly instructions: readonly Instruction[];
}

export interface Dockerfile {
  /** `ARG` instructions before the first FROM (usable in FROM lines). */
  readonly globalArgs: ReadonlyMap<string, string | undefined>;
  readonly stages: readonly Stage[];
}

/** Parses Dockerfile text. Throws on what it does not understand, naming the line. */
export function parseDockerfile(text: string): Dockerfile {
  const instructions = splitInstructions(text);
  const globalArgs = new Map<string, string | undefined>();
  const stages: { name: string | undefined; from: string; instructions: Instruction[] }[] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') {
      const match = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(instruction.args);
      if (!match) throw new Error(`line ${instruction.line}: cannot read FROM '${instruction.args}'`);
      stages.push({ from: match[1]!, name: match[2], instructions: [] });
      continue;
    }
    const stage = stages.at(-1);
    if (stage === undefined) {
      if (instruction.keyword !== 'ARG') throw new Error(`line ${instruction.line}: ${instruction.keyword} before the first FROM`);
      const [name, value] = parseArg(instruction.args);
      globalArgs.set(name, value);
      continue;
    }
    stage.instructions.push(instruction);
  }
  if (stages.length === 0) throw new Error('no FROM instruction');
  return { globalArgs, stages };
}

/** `NAME` or `NAME=default` of an ARG instruction. */
export function parseArg(args: string): [string, string | undefined] {
  const match = /^([A-Za-z_][A-Za-z0-9_]*)(?:=(.*))?$/.exec(args.trim());
  if (!match) throw new Error(`cannot read ARG '${args}'`);
  return [match[1]!, match[2] === undefined ? undefined : unquote(match[2])];
}

/** `K=V K2="V 2"` pairs of an ENV instruction (the legacy `ENV K V` form is not used here). */
export function parseEnv(args: string): Map<string, string> {
  const env = new Map<string, string>();
  const pairRe = /([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|'[^']*'|\S*)/g;
  let consumed = '';
  for (const match of args.matchAll(pairRe)) {
    env.set(match[1]!, unquote(match[2]!));
    consumed += match[0];
  }
  if (consumed.replace(/\s/g, '').length !== args.replace(/\s/g, '').length) {
    throw new Error(`cannot read ENV '${args}' (expected KEY=value pairs)`);
  }
  return env;
}

/** Replaces `$NAME` and `${NAME}` with values (unknown names become empty, as in Docker). */
export function expandVariables(text: string, vars: ReadonlyMap<string, string>): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_, a: string | undefined, b: string | undefined) => vars.get((a ?? b)!) ?? '');
}

/** The stage with this name; throws naming the stages there are. */
export function stageNamed(dockerfile: Dockerfile, name: string): Stage {
  const stage = dockerfile.stages.find((s) => s.name === name);
  if (!stage) throw new Error(`no stage '${name}' (stages: ${dockerfile.stages.map((s) => s.name ?? '(unnamed)').join(', ')})`);
  return stage;
}

function unquote(value: string): string {
  if (value.length >= 2 && ((value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'")))) {
    return value.slice(1, -1).replace(/\\(.)/g, '$1');
  }
  return value;
}

function splitInstructions(text: string): Instruction[] {
  const lines = text.split('\n');
  const out: Instruction[] = [];
  let i = 0;
  while (i < lines.length) {
    const first = lines[i]!;
    const startLine = i + 1;
    i++;
    if (first.trim() === '' || first.trimStart().startsWith('#')) continue;
    let joined = first;
    // A trailing backslash continues the instruction; comment lines inside it are dropped.
    while (/\\\s*$/.test(joined) && i < lines.length) {
      joined = joined.replace(/\\\s*$/, '');
      const next = lines[i]!;
      i++;
      if (next.trimStart().startsWith('#')) {
        joined += '\\'; // keep continuing past the comment
        continue;
      }
      joined += ` ${next.trim()}`;
    }
    const match = /^\s*([A-Za-z]+)\s*(.*)$/.exec(joined);
    if (!match) throw new Error(`line ${startLine}: cannot read '${first}'`);
    const keyword = match[1]!.toUpperCase();
    let rest = match[2]!.trim();
    const flags = new Map<string, string>();
    for (;;) {
      const flag = /^--([a-z-]+)(?:=(\S+))?\s*/.exec(rest);
      if (!flag) break;
      flags.set(flag[1]!, flag[2] ?? 'true');
      rest = rest.slice(flag[0].length);
    }
    out.push({ keyword, flags, args: rest, execForm: parseExecForm(rest), line: startLine });
  }
  return out;
}

function parseExecForm(args: string): string[] | undefined {
  // HEALTHCHECK's arguments start with CMD; its exec form follows that word.
  const json = args.startsWith('CMD ') ? args.slice(4).trim() : args;
  if (!json.startsWith('[')) return undefined;
  const parsed: unknown = JSON.parse(json);
  if (!Array.isArray(parsed) || !parsed.every((p): p is string => typeof p === 'string')) {
    throw new Error(`exec form must be a JSON array of strings: ${args}`);
  }
  return parsed;
}
