// Runs the build stages of our Dockerfiles on this machine, without a Docker engine: each stage's
// filesystem is a folder, COPY copies between them (the build context filtered by .dockerignore,
// like `docker build`), RUN runs its command with `sh -c` in the stage's WORKDIR with the stage's
// ARG/ENV values; a `RUN --mount=type=cache` target is a link to a folder that outlives the build
// (shared by builds given the same cacheDir, as BuildKit shares them on one builder). Only two
// things differ from a real build, both checked elsewhere:
//   - the toolchain RUN (`npm install --global pnpm@… turbo@…`) is skipped: the repo's own pinned
//     pnpm and turbo are on PATH instead (dockerfiles.test.ts checks the versions agree);
//   - the base image's Node is this machine's Node (the test checks the major version matches).
// RUN commands of the build stages use relative paths only (checked too), so they run unchanged.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { basename, dirname, join, posix, relative } from 'node:path';
import { expandVariables, parseArg, parseEnv, type Dockerfile, type Instruction } from './dockerfile.js';

/** Matches the toolchain install that the simulated build replaces with the repo's own tools. */
export const toolchainInstallRe = /^npm install --global\b/;

export interface BuildOptions {
  readonly dockerfile: Dockerfile;
  /** The build context as `docker build` would send it (see copyBuildContext). */
  readonly contextDir: string;
  /** Where stage filesystems are created: `<workDir>/<stage name>`. */
  readonly workDir: string;
  /** `--build-arg` values. */
  readonly buildArgs?: Readonly<Record<string, string>>;
  /** Folders put in front of PATH for RUN (the repo's node_modules/.bin: pinned pnpm + turbo). */
  readonly toolPath: readonly string[];
  /** Stop after this stage. */
  readonly untilStage: string;
  /** Called before each RUN, for progress output. */
  readonly onRun?: (stage: string, command: string) => void;
  /**
   * Where `RUN --mount=type=cache` folders live, one per mount id: give several builds the same
   * folder and they share their caches, as BuildKit's cache mounts are shared by every build on a
   * builder. @default `<workDir>/cache` (this build's own)
   */
  readonly cacheDir?: string;
}

/** What a simulated stage ended with: where its filesystem is, its WORKDIR, ENV and USER. */
export interface StageResult {
  readonly root: string;
  readonly workdir: string;
  readonly env: ReadonlyMap<string, string>;
  readonly user: string | undefined;
}

/** Runs stages in order up to `untilStage`; returns every stage's result by name. */
export function runBuild(options: BuildOptions): Map<string, StageResult> {
  const { dockerfile, contextDir, workDir, buildArgs = {}, toolPath, untilStage, onRun, cacheDir = join(workDir, 'cache') } = options;
  const results = new Map<string, StageResult>();
  const globalArgs = new Map<string, string>();
  for (const [name, value] of dockerfile.globalArgs) {
    const v = buildArgs[name] ?? value;
    if (v !== undefined) globalArgs.set(name, v);
  }
  for (const [index, stage] of dockerfile.stages.entries()) {
    const name = stage.name ?? `stage-${index}`;
    const root = join(workDir, name);
    const parent = results.get(expandVariables(stage.from, globalArgs));
    if (parent) cpSync(parent.root, root, { recursive: true, verbatimSymlinks: true });
    else mkdirSync(root, { recursive: true });
    const vars = new Map<string, string>(parent?.env ?? []); // ARG + ENV, for expansion
    const env = new Map<string, string>(parent?.env ?? []);
    let workdir = parent?.workdir ?? '/';
    let user = parent?.user;
    for (const instruction of stage.instructions) {
      const at = `${name}, line ${instruction.line}`;
      switch (instruction.keyword) {
        case 'ARG': {
          const [argName, argDefault] = parseArg(instruction.args);
          const value = buildArgs[argName] ?? argDefault ?? globalArgs.get(argName);
          if (value !== undefined) vars.set(argName, value);
          break;
        }
        case 'ENV':
          for (const [k, v] of parseEnv(expandVariables(instruction.args, vars))) {
            env.set(k, v);
            vars.set(k, v);
          }
          break;
        case 'WORKDIR':
          workdir = posix.resolve(workdir, expandVariables(instruction.args, vars));
          mkdirSync(join(root, workdir), { recursive: true });
          break;
        case 'USER':
          user = instruction.args;
          break;
        case 'COPY':
          copy(instruction, { root, workdir, vars, contextDir, results, at });
          break;
        case 'RUN': {
          const command = instruction.execForm ? instruction.execForm.join(' ') : instruction.args;
          if (toolchainInstallRe.test(command)) break;
          onRun?.(name, command);
          const unmount = mountCache(instruction, { root, workdir, vars, cacheDir, at });
          const runEnv: Record<string, string> = {
            PATH: [...toolPath, process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin'].join(':'),
            HOME: process.env.HOME ?? '/root',
          };
          for (const [k, v] of vars) runEnv[k] = v; // ARG values are visible to RUN, like Docker
          for (const [k, v] of env) runEnv[k] = v;
          const result = spawnSync('/bin/sh', ['-c', command], { cwd: join(root, workdir), env: runEnv, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
          unmount();
          if (result.status !== 0) {
            const output = `${result.stdout}\n${result.stderr}`.trim().split('\n').slice(-40).join('\n');
            throw new Error(`RUN failed (${at}, exit ${result.status ?? result.signal}): ${command}\n${output}`);
          }
          break;
        }
        // Image metadata: no effect on the filesystem.
        case 'EXPOSE':
        case 'HEALTHCHECK':
        case 'CMD':
        case 'ENTRYPOINT':
        case 'STOPSIGNAL':
        case 'LABEL':
          break;
        default:
          throw new Error(`${at}: ${instruction.keyword} is not supported by the simulated build`);
      }
    }
    results.set(name, { root, workdir, env, user });
    if (name === untilStage) return results;
  }
  throw new Error(`no stage named '${untilStage}'`);
}

/**
 * `RUN --mount=type=cache,id=…,target=…`: the target is a link to the mount's folder in `cacheDir`
 * (made on first use), so what the command writes there outlives the stage and is found by the next
 * build, as with BuildKit; the returned function takes the link away after the command (a mount is
 * not part of the stage). RUN has the host's HOME, so for a target under /root (the pnpm store's)
 * the command uses the host's own folder: already a cache that outlives the build.
 */
function mountCache(instruction: Instruction, { root, workdir, vars, cacheDir, at }: { root: string; workdir: string; vars: ReadonlyMap<string, string>; cacheDir: string; at: string }): () => void {
  const mount = instruction.flags.get('mount');
  if (mount === undefined) return () => undefined;
  const options = new Map(expandVariables(mount, vars).split(',').map((part) => {
    const eq = part.indexOf('=');
    return eq < 0 ? [part, 'true'] : [part.slice(0, eq), part.slice(eq + 1)];
  }));
  if (options.get('type') !== 'cache') throw new Error(`${at}: RUN --mount=${mount}: only type=cache is supported by the simulated build`);
  const target = options.get('target') ?? options.get('dst') ?? options.get('destination');
  if (target === undefined) throw new Error(`${at}: RUN --mount=${mount} names no target`);
  const targetPath = join(root, posix.resolve(workdir, target));
  const folder = join(cacheDir, (options.get('id') ?? target).replace(/[^\w.-]+/g, '_'));
  mkdirSync(folder, { recursive: true });
  rmSync(targetPath, { recursive: true, force: true }); // a mount hides what the stage had there
  mkdirSync(dirname(targetPath), { recursive: true });
  symlinkSync(folder, targetPath);
  return () => rmSync(targetPath, { force: true });
}

interface CopyContext {
  readonly root: string;
  readonly workdir: string;
  readonly vars: ReadonlyMap<string, string>;
  readonly contextDir: string;
  readonly results: ReadonlyMap<string, StageResult>;
  readonly at: string;
}

/** COPY semantics: a folder's contents go into the destination; a file goes into `dest/` or to `dest`. */
function copy(instruction: Instruction, { root, workdir, vars, contextDir, results, at }: CopyContext): void {
  const parts = instruction.execForm ?? expandVariables(instruction.args, vars).split(/\s+/);
  if (parts.length < 2) throw new Error(`${at}: COPY needs a source and a destination`);
  const from = instruction.flags.get('from');
  let sourceRoot = contextDir;
  if (from !== undefined) {
    const stage = results.get(from);
    if (!stage) throw new Error(`${at}: COPY --from=${from}: no earlier stage of that name`);
    sourceRoot = stage.root;
  }
  const destination = parts.at(-1)!;
  const destPath = posix.resolve(workdir, destination);
  for (const source of parts.slice(0, -1)) {
    // Context paths are relative to the context root; stage paths are absolute in that stage.
    const sourcePath = join(sourceRoot, from === undefined ? posix.normalize(`/${source}`) : source);
    if (!existsSync(sourcePath)) throw new Error(`${at}: COPY source ${source} does not exist (${sourcePath})`);
    if (lstatSync(sourcePath).isDirectory()) {
      mkdirSync(join(root, destPath), { recursive: true });
      cpSync(sourcePath, join(root, destPath), { recursive: true, verbatimSymlinks: true });
    } else {
      const target = destination.endsWith('/') ? join(root, destPath, basename(sourcePath)) : join(root, destPath);
      mkdirSync(dirname(target), { recursive: true });
      cpSync(sourcePath, target, { verbatimSymlinks: true });
    }
  }
}

/**
 * Copies `from` to `to` leaving out what .dockerignore excludes, as `docker build` sends its
 * context. Supports the pattern forms Docker documents: `*`, `?`, `**` (any number of folders),
 * a leading `!` to re-include, the last matching line winning; a matched folder excludes all below.
 */
export function copyBuildContext(from: string, to: string): { files: number } {
  const ignoreFile = join(from, '.dockerignore');
  const patterns = existsSync(ignoreFile) ? parseDockerignore(readFileSync(ignoreFile, 'utf8')) : [];
  let files = 0;
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(from, dir), { withFileTypes: true })) {
      const rel = dir === '' ? entry.name : `${dir}/${entry.name}`;
      if (isIgnored(rel, patterns)) continue;
      if (entry.isDirectory()) {
        mkdirSync(join(to, rel), { recursive: true });
        walk(rel);
      } else {
        cpSync(join(from, rel), join(to, rel), { verbatimSymlinks: true });
        files++;
      }
    }
  };
  mkdirSync(to, { recursive: true });
  walk('');
  return { files };
}

interface IgnorePattern {
  readonly exclude: boolean;
  readonly re: RegExp;
}

export function parseDockerignore(text: string): IgnorePattern[] {
  const patterns: IgnorePattern[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const exclude = !line.startsWith('!');
    const pattern = posix.normalize((exclude ? line : line.slice(1)).replace(/^\/+/, ''));
    patterns.push({ exclude, re: globToRegExp(pattern) });
  }
  return patterns;
}

/** True when the context path (relative, `/`-separated) or one of its parent folders is excluded. */
export function isIgnored(path: string, patterns: readonly IgnorePattern[]): boolean {
  let ignored = false;
  for (const { exclude, re } of patterns) {
    if (re.test(path)) ignored = exclude;
  }
  return ignored;
}

function globToRegExp(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*' && pattern[i + 1] === '*') {
      // `**/` matches zero or more folders; a trailing `**` matches everything below.
      if (pattern[i + 2] === '/') {
        re += '(?:.*/)?';
        i += 2;
      } else {
        re += '.*';
        i += 1;
      }
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  // A pattern matching a folder also matches everything in it.
  return new RegExp(`^${re}(?:/.*)?$`);
}

/** Version of the Node.js a base image tag names (`node:24-trixie-slim` → '24'), if any. */
export function nodeMajorOfImage(image: string): string | undefined {
  return /^node:(\d+)/.exec(image)?.[1];
}

/** Size of a folder in bytes (`du`), for messages. */
export function folderBytes(path: string): number {
  return Number(execFileSync('du', ['-sb', path], { encoding: 'utf8' }).split('\t')[0]);
}

/** Relative path for messages. */
export function shortPath(base: string, path: string): string {
  return relative(base, path) || '.';
}
