// Invariants of infra/docker/*.Dockerfile and .dockerignore, read from the files themselves.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readConfigTable } from './config-tables.js';
import { isIgnored, parseDockerignore, toolchainInstallRe } from './docker-build.js';
import { expandVariables, parseArg, parseDockerfile, parseEnv, stageNamed, type Dockerfile, type Instruction } from './dockerfile.js';
import { readRepoFile, repoPath, rootDevDependencies } from './repo.js';

interface ImageSpec {
  readonly file: string;
  readonly appDir: string;
  /** Port the image EXPOSEs and its HEALTHCHECK asks, undefined for the demo producer (a client). */
  readonly port: number | undefined;
}

// The ingest port is the INGEST_HTTP_PORT contract (default 9464); once the configuration table lists
// the variable, its default must agree.
const ingestPort = Number(readConfigTable('ingest').get('INGEST_HTTP_PORT')?.defaultValue ?? 9464);
const gatewayPort = Number(readConfigTable('gateway').get('GATEWAY_PORT')?.defaultValue);

const images: readonly ImageSpec[] = [
  { file: 'gateway.Dockerfile', appDir: 'gateway', port: gatewayPort },
  { file: 'ingest.Dockerfile', appDir: 'ingest', port: ingestPort },
  { file: 'demo-producer.Dockerfile', appDir: 'demo', port: undefined },
];

function load(file: string): Dockerfile {
  return parseDockerfile(readRepoFile('infra/docker', file));
}

function runs(instructions: readonly Instruction[]): string[] {
  return instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args);
}

function argDefault(instructions: readonly Instruction[], name: string): string | undefined {
  for (const i of instructions) {
    if (i.keyword !== 'ARG') continue;
    const [n, v] = parseArg(i.args);
    if (n === name) return v;
  }
  return undefined;
}

describe.each(images)('infra/docker/$file', ({ file, appDir, port }) => {
  const dockerfile = load(file);
  const manifest = JSON.parse(readFileSync(repoPath('apps', appDir, 'package.json'), 'utf8')) as { name: string; bin?: Record<string, string> };

  it('is multi-stage: base → pruner → installer → runtime, on node:24-trixie-slim', () => {
    expect(dockerfile.stages.map((s) => s.name)).toEqual(['base', 'pruner', 'installer', 'runtime']);
    const image = dockerfile.globalArgs.get('NODE_IMAGE');
    expect(image).toBe('node:24-trixie-slim');
    const vars = new Map([['NODE_IMAGE', image!]]);
    expect(expandVariables(stageNamed(dockerfile, 'base').from, vars)).toBe('node:24-trixie-slim');
    expect(expandVariables(stageNamed(dockerfile, 'runtime').from, vars)).toBe('node:24-trixie-slim');
    expect(stageNamed(dockerfile, 'pruner').from).toBe('base');
    expect(stageNamed(dockerfile, 'installer').from).toBe('base');
  });

  it('loads upstream uWebSockets.js binaries as they are: no shim, no patchelf (glibc 2.41 on Debian 13)', () => {
    for (const stage of dockerfile.stages) for (const run of runs(stage.instructions)) expect(run).not.toMatch(/patchelf|uws-native|isoc23/);
  });

  it(`builds ${manifest.name}: turbo prune --docker, frozen install of the pruned lockfile, build, pnpm deploy --prod`, () => {
    const pruner = stageNamed(dockerfile, 'pruner').instructions;
    const installer = stageNamed(dockerfile, 'installer').instructions;
    expect(argDefault(pruner, 'APP')).toBe(manifest.name);
    expect(argDefault(installer, 'APP')).toBe(manifest.name);
    expect(runs(pruner)).toEqual(['turbo prune "${APP}" --docker --out-dir pruned']);

    // Order matters for layer caching: manifests + lockfile, install, then sources and build.
    const steps = installer.filter((i) => i.keyword === 'COPY' || i.keyword === 'RUN').map((i) => `${i.keyword} ${i.args}`);
    const indexOf = (re: RegExp): number => {
      const index = steps.findIndex((s) => re.test(s));
      expect(index, `installer step ${re}`).toBeGreaterThanOrEqual(0);
      return index;
    };
    const json = indexOf(/^COPY \/repo\/pruned\/json\/ \.\/$/);
    const install = indexOf(/^RUN pnpm install --frozen-lockfile$/);
    const full = indexOf(/^COPY \/repo\/pruned\/full\/ \.\/$/);
    const build = indexOf(/^RUN turbo run build --filter="\$\{APP\}"$/);
    const deploy = indexOf(/^RUN pnpm --filter="\$\{APP\}" deploy --prod deploy$/);
    expect([json, install, full, build, deploy]).toEqual([...[json, install, full, build, deploy]].sort((a, b) => a - b));
    // Turborepo's cache (.turbo/cache under the WORKDIR) is a cache mount: rebuilds and the other
    // images restore packages already compiled.
    const turboBuild = installer.find((i) => i.keyword === 'RUN' && i.args.startsWith('turbo run build '));
    expect(turboBuild?.flags.get('mount')).toBe('type=cache,id=turbo,target=/repo/.turbo/cache');
    expect(installer.filter((i) => i.keyword === 'COPY' && i.args.includes('pruned')).every((i) => i.flags.get('from') === 'pruner')).toBe(true);
  });

  it('build stages run relative paths only (tests/infra runs them unchanged outside Docker)', () => {
    for (const name of ['pruner', 'installer']) {
      for (const command of runs(stageNamed(dockerfile, name).instructions)) {
        expect(command, `${name}: ${command}`).not.toMatch(/(^|[\s=])\/(?!dev\/null)/);
      }
    }
  });

  it('installs the toolchain versions pinned in the root package.json', () => {
    const install = runs(stageNamed(dockerfile, 'base').instructions).find((r) => toolchainInstallRe.test(r));
    expect(install).toBeDefined();
    const pinned = rootDevDependencies();
    for (const tool of ['pnpm', 'turbo']) {
      expect(install, tool).toContain(`${tool}@${pinned[tool]}`);
    }
  });

  it('runtime: NODE_ENV=production, non-root numeric USER, only the installer output, exec-form CMD', () => {
    const runtime = stageNamed(dockerfile, 'runtime').instructions;
    const env = new Map<string, string>();
    for (const i of runtime.filter((x) => x.keyword === 'ENV')) for (const [k, v] of parseEnv(i.args)) env.set(k, v);
    expect(env.get('NODE_ENV')).toBe('production');

    const userIndex = runtime.findIndex((i) => i.keyword === 'USER');
    const cmdIndex = runtime.findIndex((i) => i.keyword === 'CMD');
    expect(userIndex).toBeGreaterThanOrEqual(0);
    expect(userIndex).toBeLessThan(cmdIndex);
    // Numeric, so the kubelet can verify runAsNonRoot without reading /etc/passwd.
    const [uid, gid] = runtime[userIndex]!.args.split(':');
    expect(uid).toMatch(/^[1-9]\d*$/);
    expect(gid).toMatch(/^[1-9]\d*$/);

    // No RUN (nothing installed at runtime) and nothing from the build context (no sources).
    expect(runs(runtime)).toEqual([]);
    for (const copy of runtime.filter((i) => i.keyword === 'COPY')) expect(copy.flags.get('from'), copy.args).toBe('installer');
    const destinations = runtime.filter((i) => i.keyword === 'COPY').map((i) => i.args.split(/\s+/).at(-1));
    expect(destinations.sort()).toEqual([`./apps/${appDir}/`, `./apps/${appDir}/dist`, `./apps/${appDir}/node_modules`].sort());

    const cmd = runtime[cmdIndex]!.execForm;
    expect(cmd?.[0]).toBe('node');
    expect(cmd?.length).toBe(2);
    // The entry is one of the package's bins (main.js or producer.js), built into dist/.
    const bins = Object.values(manifest.bin ?? {}).map((b) => `apps/${appDir}/${b.replace(/^\.\//, '')}`);
    expect(bins).toContain(cmd?.[1]);
  });

  if (port === undefined) {
    it('is a client: no EXPOSE, no HEALTHCHECK', () => {
      const keywords = stageNamed(dockerfile, 'runtime').instructions.map((i) => i.keyword);
      expect(keywords).not.toContain('EXPOSE');
      expect(keywords).not.toContain('HEALTHCHECK');
    });
  } else {
    it(`exposes ${port} and checks /healthz on it (exec form, Node's fetch: no curl in the slim image)`, () => {
      const runtime = stageNamed(dockerfile, 'runtime').instructions;
      expect(runtime.filter((i) => i.keyword === 'EXPOSE').map((i) => i.args)).toEqual([String(port)]);
      const healthcheck = runtime.find((i) => i.keyword === 'HEALTHCHECK');
      expect(healthcheck?.execForm?.slice(0, 2)).toEqual(['node', '-e']);
      expect(healthcheck?.execForm?.[2]).toContain(`|| ${port}) + '/healthz'`);
      for (const flag of ['interval', 'timeout', 'start-period', 'retries']) expect(healthcheck?.flags.has(flag), flag).toBe(true);
    });
  }
});

describe('infra/docker', () => {
  it('the three Dockerfiles share their base, pruner and installer stages line for line (APP aside)', () => {
    const [first, ...rest] = images.map(({ file }) => {
      const d = load(file);
      return ['base', 'pruner', 'installer'].map((name) =>
        stageNamed(d, name)
          .instructions.filter((i) => !(i.keyword === 'ARG' && i.args.startsWith('APP=')))
          .map((i) => `${i.keyword} ${[...i.flags].map(([k, v]) => `--${k}=${v}`).join(' ')} ${i.args}`),
      );
    });
    for (const other of rest) expect(other).toEqual(first);
  });

  it('.dockerignore keeps local builds and installs out of the context, and what the build needs in', () => {
    const patterns = parseDockerignore(readRepoFile('.dockerignore'));
    for (const path of ['node_modules', 'apps/gateway/node_modules', 'apps/gateway/dist', 'packages/schema/dist/index.js', '.git', '.turbo', 'apps/ingest/.turbo', '.wirestream', 'infra/kafka/lib']) {
      expect(isIgnored(path, patterns), path).toBe(true);
    }
    for (const path of ['package.json', 'pnpm-lock.yaml', 'pnpm-workspace.yaml', '.npmrc', 'turbo.json', 'tsconfig.base.json', 'apps/gateway/src/main.ts', 'packages/schema/schema/auction.graphql']) {
      expect(isIgnored(path, patterns), path).toBe(false);
    }
  });
});
