// One Node.js major everywhere (decision 0034): the set-up's pinned Node, package.json#engines, every
// @types/node, the three images' base, and what the Kubernetes manifests run (the images, with their
// NODE_OPTIONS) — and this test process itself, which the set-up started.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { nodeMajorOfImage } from './docker-build.js';
import { parseDockerfile } from './dockerfile.js';
import { kustomize, type KubeObject } from './kubernetes.js';
import { readRepoFile, repoPath } from './repo.js';

const NODE_MAJOR = '24';
const DOCKERFILES = ['gateway.Dockerfile', 'ingest.Dockerfile', 'demo-producer.Dockerfile'];

interface Container {
  readonly name: string;
  readonly image: string;
  readonly env?: readonly { name: string; value?: string }[];
}

function containersOf(objects: readonly KubeObject[]): Container[] {
  return objects
    .filter((o) => o.kind === 'Deployment')
    .flatMap((o) => ((o as unknown as { spec: { template: { spec: { containers: Container[] } } } }).spec.template.spec.containers));
}

/** Every package.json of the workspace (root, apps, packages, tests, bench), by path. */
function manifests(): Map<string, { engines?: { node?: string }; devDependencies?: Record<string, string>; dependencies?: Record<string, string> }> {
  const paths = ['package.json'];
  for (const group of ['apps', 'packages', 'tests', 'bench']) {
    for (const entry of readdirSync(repoPath(group), { withFileTypes: true })) {
      if (entry.isDirectory()) paths.push(`${group}/${entry.name}/package.json`);
    }
  }
  return new Map(paths.flatMap((p) => {
    try {
      return [[p, JSON.parse(readRepoFile(p)) as object]] as const;
    } catch {
      return [];
    }
  }));
}

describe(`one Node.js major: ${NODE_MAJOR}`, () => {
  it('the set-up pins it (scripts/bootstrap.sh NODE_VERSION) and this test runs on it', () => {
    const pinned = /^NODE_VERSION="(\d+)\.(\d+)\.(\d+)"/m.exec(readRepoFile('scripts/bootstrap.sh'));
    expect(pinned, 'NODE_VERSION="x.y.z" in scripts/bootstrap.sh').not.toBeNull();
    expect(pinned?.[1]).toBe(NODE_MAJOR);
    expect(process.versions.node.split('.')[0], `tests run on ${process.version}: run them through scripts/bootstrap.sh`).toBe(NODE_MAJOR);
  });

  it('package.json#engines admits that major and no other', () => {
    const engines = (JSON.parse(readRepoFile('package.json')) as { engines?: { node?: string } }).engines?.node ?? '';
    expect(engines).toMatch(new RegExp(`^>=${NODE_MAJOR}\\.\\d+\\.\\d+ <${Number(NODE_MAJOR) + 1}$`));
  });

  it('every @types/node is of that major', () => {
    const found = [...manifests()].flatMap(([path, m]) => {
      const v = m.devDependencies?.['@types/node'] ?? m.dependencies?.['@types/node'];
      return v === undefined ? [] : [[path, v.split('.')[0]] as const];
    });
    expect(found.length).toBeGreaterThan(0);
    expect(found.filter(([, major]) => major !== NODE_MAJOR)).toEqual([]);
  });

  it.each(DOCKERFILES)('infra/docker/%s runs it on Debian 13 (trixie, glibc >= 2.38 for upstream uWS binaries)', (file) => {
    const image = parseDockerfile(readRepoFile('infra/docker', file)).globalArgs.get('NODE_IMAGE') ?? '';
    expect(nodeMajorOfImage(image)).toBe(NODE_MAJOR);
    expect(image).toMatch(/^node:[\d.]+-trixie-slim$/);
  });

  it("the manifests run the images of those Dockerfiles, with NODE_OPTIONS this Node accepts", () => {
    const containers = containersOf(kustomize(repoPath('infra/k8s/overlays/production')));
    // Image names end in the app's name (the production overlay prefixes a registry).
    expect(containers.map((c) => c.image.replace(/:.*$/, '').split('/').at(-1)).sort()).toEqual(['gateway', 'ingest']);
    for (const c of containers) {
      const options = c.env?.find((e) => e.name === 'NODE_OPTIONS')?.value;
      if (options === undefined) continue;
      const run = spawnSync(process.execPath, ['-e', '0'], { env: { PATH: process.env['PATH'] ?? '', NODE_OPTIONS: options }, encoding: 'utf8' });
      expect(run.status, `${c.name}: NODE_OPTIONS=${options} on ${process.version}: ${run.stderr}`).toBe(0);
    }
  });
});
