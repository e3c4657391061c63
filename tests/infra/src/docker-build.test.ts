// The images' build, for real, without a Docker engine: each Dockerfile's pruner and installer
// stages run on this machine (turbo prune --docker → pnpm install --frozen-lockfile on the pruned
// lockfile → turbo build → pnpm deploy --prod → uWS binary trim), the runtime stage is assembled
// from the installer's output, and its CMD is started: it must load every production dependency
// (ESM links all static imports before main.ts reads its config) and exit 78 on bad config.
// The gateway is also started for real: /healthz, /readyz, the image's HEALTHCHECK and a drain.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyBuildContext, nodeMajorOfImage, runBuild, type StageResult } from './docker-build.js';
import { parseDockerfile, stageNamed, type Dockerfile } from './dockerfile.js';
import { freePort } from '@wirestream/testkit';
import { readRepoFile, repoPath, repoRoot } from './repo.js';

const BUILD_TIMEOUT_MS = 240_000; // install + build + deploy of one app: ~30 s alone, more under load

let work: string;
let contextDir: string;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'wirestream-images-'));
  chmodSync(work, 0o755); // the runtime check runs as the image's USER
  contextDir = join(work, 'context');
  copyBuildContext(repoRoot, contextDir);
});

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

interface AppImage {
  readonly dockerfile: string;
  /** Folder under apps/ */
  readonly dir: string;
  /** Environment that makes the app's config invalid, and the variable the message must name. */
  readonly badConfig: Readonly<Record<string, string>>;
  readonly badVariable: string;
}

const images: readonly AppImage[] = [
  // GATEWAY_AUTH_MODE has no default: missing config.
  { dockerfile: 'gateway.Dockerfile', dir: 'gateway', badConfig: {}, badVariable: 'GATEWAY_AUTH_MODE' },
  // Every ingest variable has a default: an invalid value instead.
  { dockerfile: 'ingest.Dockerfile', dir: 'ingest', badConfig: { INGEST_PUBLISH_CHUNK: '0' }, badVariable: 'INGEST_PUBLISH_CHUNK' },
  { dockerfile: 'demo-producer.Dockerfile', dir: 'demo', badConfig: { DEMO_RATE: '0' }, badVariable: 'DEMO_RATE' },
];

function build(image: AppImage): { dockerfile: Dockerfile; runtime: StageResult; installer: StageResult } {
  const dockerfile = parseDockerfile(readRepoFile('infra/docker', image.dockerfile));
  const results = runBuild({
    dockerfile,
    contextDir,
    workDir: join(work, image.dir),
    toolPath: [repoPath('node_modules/.bin')],
    untilStage: 'runtime',
    // One builder for the three images: the ones built later restore the packages the gateway's
    // build compiled from Turborepo's cache mount instead of compiling them again.
    cacheDir: join(work, 'cache'),
  });
  const runtime = results.get('runtime')!;
  if (image.dir === 'gateway') shimForThisHost(join(runtime.root, runtime.workdir, 'apps', image.dir));
  return { dockerfile, runtime, installer: results.get('installer')! };
}

/**
 * The images' Debian 13 has glibc 2.41 and loads upstream's uWS binary as it is; a host with glibc
 * < 2.38 (Debian 12) needs the set-up's three-symbol shim to start the runtime tree here (decision
 * 0034). Applied to the tree after the build, like the host's Node standing in for the base image's;
 * a no-op on a newer glibc. dockerfiles.test.ts checks that the images themselves patch nothing.
 */
function shimForThisHost(appDir: string): void {
  const run = spawnSync(process.execPath, [repoPath('scripts/uws-native.mjs'), appDir], { encoding: 'utf8', timeout: 60_000 });
  if (run.status !== 0) throw new Error(`scripts/uws-native.mjs ${appDir}: ${run.stderr}`);
}

/** Starts the runtime stage's CMD (or another command) as the image would: its WORKDIR, ENV and USER. */
function startInImage(runtime: StageResult, command: readonly string[], extraEnv: Readonly<Record<string, string>>): ChildProcess {
  const env: Record<string, string> = { PATH: `${dirname(process.execPath)}:/usr/bin:/bin` };
  for (const [k, v] of runtime.env) env[k] = v;
  Object.assign(env, extraEnv);
  const ids = process.getuid?.() === 0 && runtime.user ? runtime.user.split(':').map(Number) : [];
  return spawn(command[0]!, command.slice(1), {
    cwd: join(runtime.root, runtime.workdir),
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(ids.length === 2 ? { uid: ids[0]!, gid: ids[1]! } : {}),
  });
}

async function exited(child: ChildProcess, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`process did not exit within ${timeoutMs} ms; output:\n${output}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      // 'exit' may come before the last 'data'; 'close' comes after both streams ended.
      child.on('close', () => resolve({ code, output }));
    });
  });
}

function cmdOf(dockerfile: Dockerfile): string[] {
  const cmd = stageNamed(dockerfile, 'runtime').instructions.find((i) => i.keyword === 'CMD')?.execForm;
  if (!cmd) throw new Error('runtime stage has no exec-form CMD');
  return [...cmd];
}

describe('images (Dockerfile stages run without a Docker engine)', () => {
  it('this Node.js has the major version of the images (same ABI for the uWS binary kept)', () => {
    const dockerfile = parseDockerfile(readRepoFile('infra/docker/gateway.Dockerfile'));
    const image = dockerfile.globalArgs.get('NODE_IMAGE');
    expect(image).toBeDefined();
    expect(process.versions.node.split('.')[0]).toBe(nodeMajorOfImage(image!));
  });

  for (const image of images) {
    it(
      `${image.dockerfile}: pruned frozen install, build, production deploy; the runtime tree loads and exits 78 on bad config`,
      async () => {
        const { dockerfile, runtime, installer } = build(image);
        const appDir = join(runtime.root, runtime.workdir, 'apps', image.dir);
        const cmd = cmdOf(dockerfile);
        const entry = join(runtime.root, runtime.workdir, cmd[1]!);
        // pnpm links bins to an empty placeholder before a build: the file must be the compiled one.
        expect(existsSync(entry), `${cmd[1]} in the runtime image`).toBe(true);
        expect(statSync(entry).size).toBeGreaterThan(100);
        // The installer installed from the pruned lockfile (turbo prune --docker puts it in json/).
        expect(existsSync(join(installer.root, installer.workdir, 'pnpm-lock.yaml'))).toBe(true);

        // Production dependencies only.
        const manifest = JSON.parse(readFileSync(repoPath('apps', image.dir, 'package.json'), 'utf8')) as {
          dependencies?: Record<string, string>;
          devDependencies?: Record<string, string>;
        };
        const modules = join(appDir, 'node_modules');
        for (const dep of Object.keys(manifest.dependencies ?? {})) expect(existsSync(join(modules, dep)), `dependency ${dep}`).toBe(true);
        for (const dev of Object.keys(manifest.devDependencies ?? {})) expect(existsSync(join(modules, dev)), `devDependency ${dev}`).toBe(false);
        const virtualStore = readdirSync(join(modules, '.pnpm'));
        for (const tool of ['typescript@', 'vitest@', 'turbo@', 'tsx@', '@wirestream+testkit']) {
          expect(virtualStore.filter((d) => d.startsWith(tool)), `${tool} in the runtime node_modules`).toEqual([]);
        }

        const { code, output } = await exited(startInImage(runtime, cmd, image.badConfig), 30_000);
        expect(output).toContain('Invalid configuration');
        expect(output).toContain(image.badVariable);
        expect(code, output).toBe(78);
        // The gateway refuses to start without uWS's native addon (exit 78 too, but another line).
        expect(output).not.toContain('native addon');

        // Build stages hold ~1 GB of node_modules per app; the runtime tree stays for the next test.
        for (const stage of ['base', 'pruner', 'installer']) rmSync(join(work, image.dir, stage), { recursive: true, force: true });
      },
      BUILD_TIMEOUT_MS,
    );
  }

  it(
    'gateway runtime tree: native uWS only, serves /healthz and /readyz, passes its HEALTHCHECK, drains on SIGTERM',
    async () => {
      const gateway = images[0]!;
      const dockerfile = parseDockerfile(readRepoFile('infra/docker', gateway.dockerfile));
      const runtimeRoot = join(work, gateway.dir, 'runtime');
      if (!existsSync(runtimeRoot)) build(gateway); // when run alone (-t)
      const runtime: StageResult = {
        root: runtimeRoot,
        workdir: '/app',
        env: new Map([['NODE_ENV', 'production']]),
        user: stageNamed(dockerfile, 'runtime').instructions.find((i) => i.keyword === 'USER')?.args,
      };
      const binaries = readdirSync(join(runtimeRoot, 'app/apps/gateway/node_modules/uWebSockets.js')).filter((f) => f.endsWith('.node'));
      expect(binaries).toEqual([`uws_linux_${process.arch}_${process.versions.modules}.node`]);

      const [port, closedPort] = await Promise.all([freePort(), freePort()]);
      const env = {
        GATEWAY_AUTH_MODE: 'anonymous',
        GATEWAY_PORT: String(port),
        // Nothing listens there: the gateway runs, logs Redis errors and is not ready.
        REDIS_URL: `redis://127.0.0.1:${closedPort}`,
      };
      const child = startInImage(runtime, cmdOf(dockerfile), env);
      const done = exited(child, 60_000);
      try {
        await waitForStatus(`http://127.0.0.1:${port}/healthz`, 200, 20_000);
        expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(503);

        const healthcheck = stageNamed(dockerfile, 'runtime').instructions.find((i) => i.keyword === 'HEALTHCHECK')?.execForm;
        expect(healthcheck).toBeDefined();
        const probe = spawnSync(healthcheck![0]!, healthcheck!.slice(1), { env: { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, ...env }, timeout: 10_000 });
        expect(probe.status, probe.stderr?.toString()).toBe(0);

        child.kill('SIGTERM');
        const { code, output } = await done;
        expect(code, output).toBe(0);
        expect(output).toContain('gateway drained');
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
      }
    },
    BUILD_TIMEOUT_MS,
  );
});


async function waitForStatus(url: string, status: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url);
      if (res.status === status) return;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer ${status} within ${timeoutMs} ms (last: ${last})`);
}
