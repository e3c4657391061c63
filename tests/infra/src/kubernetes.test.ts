// infra/k8s rendered with the real kustomize (`kubectl kustomize`), validated against the
// Kubernetes API schemas, and checked for the rules the runbook (docs/operations.md) relies on.
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IStatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import type { IJob } from 'kubernetes-models/batch/v1/Job';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IService } from 'kubernetes-models/v1/Service';
import { describe, expect, it } from 'vitest';
import { capacity, mebibytes, readCapacityNumbers } from './capacity.js';
import { CONFIGURATION_PAGE, readConfigTable, type ConfigApp } from './config-tables.js';
import { parseDockerfile, stageNamed } from './dockerfile.js';
import { kustomize, kustomizeRendersComponents, kubectlVersion, strictTypeCheck, validateAgainstSchema, type KubeObject } from './kubernetes.js';
import { readRepoFile, repoPath } from './repo.js';

// The Redis Cluster overlay adds a kustomize Component, which kustomize v2.0 (Debian's kubectl 1.20)
// cannot render: there it is skipped, and says so, rather than failing the other checks.
const rendersComponents = kustomizeRendersComponents();
const renders: Readonly<Record<string, KubeObject[]>> = {
  base: kustomize(repoPath('infra/k8s/base')),
  production: kustomize(repoPath('infra/k8s/overlays/production')),
  'byo-kafka': kustomize(repoPath('infra/k8s/overlays/byo-kafka')),
  ...(rendersComponents ? { 'production-cluster': kustomize(repoPath('infra/k8s/overlays/production-cluster')) } : {}),
};

/** What components/redis-cluster adds to an overlay. */
const redisClusterObjects = [
  'ConfigMap/wirestream-redis-cluster-<hash>',
  'Job/wirestream-redis-cluster-create',
  'NetworkPolicy/wirestream-redis-cluster',
  'PodDisruptionBudget/wirestream-redis-cluster',
  'Service/wirestream-redis-cluster',
  'StatefulSet/wirestream-redis-cluster',
];

/** Variables a container may set beyond its app's configuration table. */
const runtimeVariables = new Set(['NODE_OPTIONS']);
const apps = ['gateway', 'ingest'] as const;
type App = (typeof apps)[number];
const tableOf: Record<App, ConfigApp> = { gateway: 'gateway', ingest: 'ingest' };

function ofKind<T>(objects: readonly KubeObject[], kind: string): T[] {
  return objects.filter((o) => o.kind === kind) as unknown as T[];
}

function named<T extends { metadata?: { name?: string } }>(objects: readonly T[], name: string): T {
  const found = objects.find((o) => o.metadata?.name === name);
  if (!found) throw new Error(`no object named ${name}`);
  return found;
}

function deploymentOf(objects: readonly KubeObject[], app: App): IDeployment {
  return named(ofKind<IDeployment>(objects, 'Deployment'), `wirestream-${app}`);
}

function containerOf(objects: readonly KubeObject[], app: App): IContainer {
  const containers = deploymentOf(objects, app).spec?.template.spec?.containers ?? [];
  expect(containers.map((c) => c.name)).toEqual([app]);
  return containers[0]!;
}

/** The ConfigMap a container reads through envFrom (its generated, hash-suffixed name). */
function configMapOf(objects: readonly KubeObject[], app: App): Record<string, string> {
  const refs = (containerOf(objects, app).envFrom ?? []).map((e) => e.configMapRef?.name).filter((n): n is string => n !== undefined);
  expect(refs).toHaveLength(1);
  return named(ofKind<IConfigMap>(objects, 'ConfigMap'), refs[0]!).data ?? {};
}

function matches(selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean {
  const entries = Object.entries(selector ?? {});
  return entries.length > 0 && entries.every(([k, v]) => labels?.[k] === v);
}

/** The uid:gid the image runs as (Dockerfile USER). */
function imageUser(app: App): [number, number] {
  const runtime = stageNamed(parseDockerfile(readRepoFile('infra/docker', `${app}.Dockerfile`)), 'runtime');
  const [uid, gid] = (runtime.instructions.find((i) => i.keyword === 'USER')?.args ?? '').split(':').map(Number);
  return [uid!, gid!];
}

/** The port each app serves on: GATEWAY_PORT; INGEST_HTTP_PORT (the /metrics contract, default 9464). */
function appPort(objects: readonly KubeObject[], app: App): number {
  const config = configMapOf(objects, app);
  if (app === 'gateway') return Number(config.GATEWAY_PORT ?? readConfigTable('gateway').get('GATEWAY_PORT')?.defaultValue);
  return Number(config.INGEST_HTTP_PORT ?? readConfigTable('ingest').get('INGEST_HTTP_PORT')?.defaultValue ?? 9464);
}

function maxOldSpaceMiB(container: IContainer): number | undefined {
  const options = container.env?.find((e) => e.name === 'NODE_OPTIONS')?.value ?? '';
  const match = /--max-old-space-size=(\d+)/.exec(options);
  return match ? Number(match[1]) : undefined;
}

describe.each(Object.keys(renders))('infra/k8s %s (kubectl kustomize)', (which) => {
  const objects = renders[which]!;

  if (which === 'byo-kafka') {
    it('mounts the schema and the Kafka/Redis secrets as files, and points the settings at them', () => {
      const mounts = (app: App) => new Map((containerOf(objects, app).volumeMounts ?? []).map((m) => [m.mountPath, m]));
      const env = (app: App) => new Map((containerOf(objects, app).env ?? []).map((e) => [e.name, e.value]));
      for (const app of apps) {
        const config = configMapOf(objects, app);
        expect(config['SCHEMA_PATH']).toBe('/etc/wirestream/schema/schema.graphql');
        expect(mounts(app).get('/etc/wirestream/schema')?.readOnly).toBe(true);
        expect(env(app).get('REDIS_PASSWORD_FILE')).toBe('/etc/wirestream/secrets/redis/password');
        expect(config['REDIS_URL']?.startsWith('rediss://')).toBe(true);
      }
      expect(env('ingest').get('KAFKA_SASL_PASSWORD_FILE')).toBe('/etc/wirestream/secrets/kafka/password');
      expect(configMapOf(objects, 'ingest')['KAFKA_SSL_CA_FILE']).toBe('/etc/wirestream/secrets/kafka/ca.pem');
      const secrets = ofKind<{ spec?: { template?: { spec?: { volumes?: { secret?: { secretName?: string } }[] } } } }>(objects, 'Deployment').flatMap((d) =>
        (d.spec?.template?.spec?.volumes ?? []).flatMap((v) => (v.secret?.secretName ? [v.secret.secretName] : [])),
      );
      expect(new Set(secrets)).toEqual(new Set(['wirestream-kafka', 'wirestream-redis']));
    });
  }

  it('renders the ServiceAccount, and per app a ConfigMap, Service, Deployment, HPA and PodDisruptionBudget', () => {
    const summary = objects.map((o) => `${o.kind}/${o.metadata.name.replace(/-[a-z0-9]{10}$/, '-<hash>')}`).sort();
    expect(summary).toEqual(
      [
        'ConfigMap/wirestream-gateway-<hash>',
        'ConfigMap/wirestream-ingest-<hash>',
        'Deployment/wirestream-gateway',
        'Deployment/wirestream-ingest',
        'HorizontalPodAutoscaler/wirestream-gateway',
        'HorizontalPodAutoscaler/wirestream-ingest',
        'PodDisruptionBudget/wirestream-gateway',
        'PodDisruptionBudget/wirestream-ingest',
        'Service/wirestream-gateway',
        'Service/wirestream-ingest',
        'ServiceAccount/wirestream',
        ...(which === 'production-cluster' ? redisClusterObjects : []),
        ...(which === 'byo-kafka' ? ['ConfigMap/wirestream-schema'] : []),
      ].sort(),
    );
  });

  it('every object is valid against the Kubernetes OpenAPI schema of its kind (kubernetes-models + Ajv)', async () => {
    const problems: string[] = [];
    for (const object of objects) {
      for (const problem of await validateAgainstSchema(object)) problems.push(`${object.kind} ${object.metadata.name}: ${problem}`);
    }
    expect(problems).toEqual([]);
  });

  it('has no unknown or mistyped field at any depth (strict, like kubectl --validate=strict)', () => {
    expect(strictTypeCheck(objects)).toEqual([]);
  }, 30_000);

  it('selectors agree: Deployments select their pods; Services, PDBs and spread constraints select them too; HPAs target the Deployments', () => {
    for (const app of apps) {
      const deployment = deploymentOf(objects, app);
      const podLabels = deployment.spec?.template.metadata?.labels;
      const selector = deployment.spec?.selector.matchLabels;
      expect(matches(selector, podLabels), `${app} Deployment selector`).toBe(true);
      expect(matches(named(ofKind<IService>(objects, 'Service'), `wirestream-${app}`).spec?.selector, podLabels), `${app} Service`).toBe(true);
      expect(matches(named(ofKind<IPodDisruptionBudget>(objects, 'PodDisruptionBudget'), `wirestream-${app}`).spec?.selector?.matchLabels, podLabels), `${app} PDB`).toBe(true);
      for (const spread of deployment.spec?.template.spec?.topologySpreadConstraints ?? []) {
        expect(matches(spread.labelSelector?.matchLabels, podLabels), `${app} spread ${spread.topologyKey}`).toBe(true);
      }
      const target = named(ofKind<IHorizontalPodAutoscaler>(objects, 'HorizontalPodAutoscaler'), `wirestream-${app}`).spec?.scaleTargetRef;
      expect(target).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: `wirestream-${app}` });
      // The Service's named target port is the container's.
      const service = named(ofKind<IService>(objects, 'Service'), `wirestream-${app}`);
      const containerPorts = (containerOf(objects, app).ports ?? []).map((p) => p.name);
      for (const port of service.spec?.ports ?? []) expect(containerPorts).toContain(port.targetPort);
    }
  });

  it('containers set only variables of their configuration tables; secrets only through secretKeyRef', () => {
    for (const app of apps) {
      const table = readConfigTable(tableOf[app]);
      const container = containerOf(objects, app);
      const config = configMapOf(objects, app);
      const secretVariables = new Set(
        readRepoFile(CONFIGURATION_PAGE)
          .split('\n')
          .filter((l) => l.includes('(secret'))
          .map((l) => /`([A-Z0-9_]+)`/.exec(l)?.[1]),
      );
      expect(Object.keys(config).filter((k) => !table.has(k)), `${app} ConfigMap keys not in its configuration table`).toEqual([]);
      expect(Object.keys(config).filter((k) => secretVariables.has(k)), `${app} secrets in a ConfigMap`).toEqual([]);
      for (const env of container.env ?? []) {
        // A secret may instead be read from a mounted file named by <NAME>_FILE (packages/config).
        const fileOfSecret = env.name.endsWith('_FILE') && secretVariables.has(env.name.slice(0, -'_FILE'.length));
        expect(table.has(env.name) || runtimeVariables.has(env.name) || fileOfSecret, `${app} env ${env.name}`).toBe(true);
        if (secretVariables.has(env.name)) {
          expect(env.value, `${env.name} must not be a literal`).toBeUndefined();
          expect(env.valueFrom?.secretKeyRef?.name, `${env.name} from a Secret`).toBeTruthy();
        }
      }
      const set = new Set([...Object.keys(config), ...(container.env ?? []).map((e) => e.name)]);
      for (const variable of table.values()) if (variable.required) expect(set.has(variable.name), `${app} required ${variable.name}`).toBe(true);
    }
    // Anonymous access is a laptop decision only.
    expect(configMapOf(objects, 'gateway').GATEWAY_AUTH_MODE).toBe('jwt');
    const jwtSecret = containerOf(objects, 'gateway').env?.find((e) => e.name === 'GATEWAY_JWT_HS256_SECRET');
    expect(jwtSecret?.valueFrom?.secretKeyRef).toEqual({ name: 'wirestream-gateway-auth', key: 'jwt-hs256-secret' });
  });

  it('probes: startup and liveness on /healthz, readiness on /readyz, on the port the app serves', () => {
    for (const app of apps) {
      const container = containerOf(objects, app);
      const port = container.ports?.find((p) => p.name === 'http');
      expect(port?.containerPort, `${app} port`).toBe(appPort(objects, app));
      expect(container.startupProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
      expect(container.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
      expect(container.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http' });
      const annotations = deploymentOf(objects, app).spec?.template.metadata?.annotations ?? {};
      expect(annotations['prometheus.io/port']).toBe(String(appPort(objects, app)));
      expect(annotations['prometheus.io/path']).toBe('/metrics');
    }
  });

  it("pods run as the image's non-root user, read-only root filesystem, no capabilities, no API token", () => {
    for (const app of apps) {
      const pod = deploymentOf(objects, app).spec?.template.spec;
      const [uid, gid] = imageUser(app);
      expect(pod?.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: uid, runAsGroup: gid, seccompProfile: { type: 'RuntimeDefault' } });
      expect(pod?.automountServiceAccountToken).toBe(false);
      expect(pod?.serviceAccountName).toBe('wirestream');
      expect(containerOf(objects, app).securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    }
  });

  it('resources: memory request = limit and derived from the capacity table (docs/operations.md); V8 heap = limit − native reserve; CPU request, no CPU limit', () => {
    const n = readCapacityNumbers();
    const gatewayConfig = configMapOf(objects, 'gateway');
    const ingestConfig = configMapOf(objects, 'ingest');
    const mib = 1_048_576;
    const need: Record<App, number> = {
      gateway:
        (capacity(n, 'gateway.base_rss') +
          (capacity(n, 'gateway.max_sockets') * capacity(n, 'gateway.socket_bytes')) / mib +
          (capacity(n, 'gateway.slow_sockets') * Number(gatewayConfig.GATEWAY_MAX_BACKPRESSURE_BYTES ?? readConfigTable('gateway').get('GATEWAY_MAX_BACKPRESSURE_BYTES')?.defaultValue)) / mib +
          capacity(n, 'gateway.working_set')) *
        capacity(n, 'gateway.gc_headroom'),
      ingest:
        (capacity(n, 'ingest.base_rss') +
          capacity(n, 'ingest.fetch_buffer') +
          (Number(ingestConfig.INGEST_PARTITIONS_CONCURRENTLY ?? readConfigTable('ingest').get('INGEST_PARTITIONS_CONCURRENTLY')?.defaultValue) *
            Number(ingestConfig.INGEST_PUBLISH_CHUNK ?? readConfigTable('ingest').get('INGEST_PUBLISH_CHUNK')?.defaultValue) *
            capacity(n, 'ingest.message_bytes') *
            capacity(n, 'ingest.message_copies')) /
            mib +
          capacity(n, 'ingest.redis_pipeline')) *
        capacity(n, 'ingest.gc_headroom'),
    };
    for (const app of apps) {
      const resources = containerOf(objects, app).resources;
      const request = mebibytes(resources?.requests?.memory ?? '0');
      const limit = mebibytes(resources?.limits?.memory ?? '0');
      expect(request, `${app} memory request = limit`).toBe(limit);
      expect(limit, `${app}: the limit must cover ${need[app].toFixed(0)} MiB (docs/operations.md)`).toBeGreaterThanOrEqual(need[app]);
      expect(limit, `${app}: the limit is more than twice the ${need[app].toFixed(0)} MiB needed: shrink it`).toBeLessThanOrEqual(2 * need[app]);
      expect(maxOldSpaceMiB(containerOf(objects, app)), `${app} --max-old-space-size`).toBe(limit - capacity(n, `${app}.native_reserve`));
      expect(resources?.requests?.cpu, `${app} CPU request`).toBeDefined();
      expect(resources?.limits?.cpu, `${app}: no CPU limit (throttling a single event loop)`).toBeUndefined();
    }
  });

  it('gateway drain: preStop sleep, then SIGTERM; grace = preStop + drain + margin; liveness outlasts it', () => {
    const n = readCapacityNumbers();
    const pod = deploymentOf(objects, 'gateway').spec?.template.spec;
    const container = containerOf(objects, 'gateway');
    const prestop = capacity(n, 'gateway.prestop');
    expect(container.lifecycle?.preStop?.exec?.command).toEqual(['sleep', String(prestop)]);
    const grace = pod?.terminationGracePeriodSeconds ?? 30;
    expect(grace).toBe(prestop + capacity(n, 'gateway.drain') + capacity(n, 'gateway.grace_margin'));
    const liveness = container.livenessProbe!;
    expect((liveness.periodSeconds ?? 10) * (liveness.failureThreshold ?? 3), 'liveness failure window vs grace').toBeGreaterThan(grace);
    // Readiness drops a broken pod from the Service well within the preStop window.
    const readiness = container.readinessProbe!;
    expect((readiness.periodSeconds ?? 10) * (readiness.failureThreshold ?? 3)).toBeLessThanOrEqual(prestop);
    // One pod at a time: each replaced gateway sends all its clients elsewhere.
    expect(deploymentOf(objects, 'gateway').spec?.strategy?.rollingUpdate).toEqual({ maxSurge: 1, maxUnavailable: 0 });
  });

  it('HPAs (autoscaling/v2) scale on CPU and memory and own the replica count; PDBs allow one eviction at a time', () => {
    for (const app of apps) {
      expect(deploymentOf(objects, app).spec?.replicas, `${app}: no replicas field (the HPA owns it)`).toBeUndefined();
      const hpa = named(ofKind<IHorizontalPodAutoscaler>(objects, 'HorizontalPodAutoscaler'), `wirestream-${app}`);
      expect(hpa.apiVersion).toBe('autoscaling/v2');
      const resources = (hpa.spec?.metrics ?? []).map((m) => `${m.type}:${m.resource?.name}:${m.resource?.target.type}`).sort();
      expect(resources).toEqual(['Resource:cpu:Utilization', 'Resource:memory:Utilization']);
      const min = hpa.spec?.minReplicas ?? 1;
      expect(min, `${app} minReplicas`).toBeGreaterThanOrEqual(2);
      expect(hpa.spec?.maxReplicas).toBeGreaterThan(min);
      expect(hpa.spec?.behavior?.scaleDown?.stabilizationWindowSeconds ?? 0, `${app}: scale down slowly`).toBeGreaterThanOrEqual(300);
      const pdb = named(ofKind<IPodDisruptionBudget>(objects, 'PodDisruptionBudget'), `wirestream-${app}`);
      expect(pdb.spec?.maxUnavailable).toBe(1);
    }
  });
});

describe('infra/k8s production overlay', () => {
  const objects = renders.production!;

  it('puts everything in its namespace and runs released images (registry, version tag, never latest)', () => {
    for (const object of objects) expect(object.metadata.namespace, `${object.kind} ${object.metadata.name}`).toBe('wirestream');
    for (const app of apps) {
      const image = containerOf(objects, app).image ?? '';
      expect(image, app).toMatch(new RegExp(`^[a-z0-9.-]+\\.[a-z]+(:\\d+)?/.+/${app}:\\d+\\.\\d+\\.\\d+`));
    }
  });

  it('keeps at least 3 gateways (losing one moves a third of the sockets) and no more ingest replicas than planned partitions', () => {
    const hpa = (app: App) => named(ofKind<IHorizontalPodAutoscaler>(objects, 'HorizontalPodAutoscaler'), `wirestream-${app}`).spec!;
    expect(hpa('gateway').minReplicas).toBeGreaterThanOrEqual(3);
    expect(hpa('ingest').maxReplicas).toBeLessThanOrEqual(12); // docs/operations.md: topics get ≥ 12 partitions
  });

  it('a new consumer group starts at the live end, and the per-address limit counts clients, not the proxy', () => {
    expect(configMapOf(objects, 'ingest').INGEST_FROM_BEGINNING).toBe('false');
    const gateway = configMapOf(objects, 'gateway');
    // Without trusted forwarded addresses every client shares the proxy's: the limit would have to be the pod's cap.
    expect(Number(gateway.GATEWAY_TRUSTED_PROXY_HOPS)).toBeGreaterThanOrEqual(1);
    const n = readCapacityNumbers();
    expect(Number(gateway.GATEWAY_MAX_CONNECTIONS_PER_ADDRESS)).toBeLessThan(capacity(n, 'gateway.max_sockets'));
  });
});

describe.skipIf(!rendersComponents)(`infra/k8s production-cluster overlay (components/redis-cluster)${rendersComponents ? '' : `: skipped, ${kubectlVersion()} renders no kustomize Components (needs ≥ v3.7, kubectl ≥ 1.21)`}`, () => {
  const objects = renders['production-cluster'] ?? [];
  const name = 'wirestream-redis-cluster';
  const statefulSet = () => named(ofKind<IStatefulSet>(objects, 'StatefulSet'), name);
  const job = () => named(ofKind<IJob>(objects, 'Job'), `${name}-create`);
  const redisContainer = () => statefulSet().spec!.template.spec!.containers[0]!;
  /** The component's ConfigMap: redis.conf and the scripts (its generated, hash-suffixed name). */
  const files = (): Record<string, string> => {
    const ref = statefulSet().spec?.template.spec?.volumes?.find((v) => v.name === 'config')?.configMap?.name ?? '';
    expect(ref).toMatch(new RegExp(`^${name}-[a-z0-9]{10}$`));
    expect(job().spec?.template.spec?.volumes?.find((v) => v.name === 'config')?.configMap?.name).toBe(ref);
    return named(ofKind<IConfigMap>(objects, 'ConfigMap'), ref).data ?? {};
  };
  /** `directive value` lines of redis.conf. */
  const redisConf = (): Map<string, string> =>
    new Map(
      (files()['redis.conf'] ?? '')
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== '' && !l.startsWith('#'))
        .map((l) => [l.split(/\s+/)[0]!, l.slice(l.indexOf(' ') + 1).trim()] as const),
    );
  const env = (container: IContainer | undefined, variable: string) => container?.env?.find((e) => e.name === variable)?.value;

  it('six cluster-enabled nodes on their own volumes, each started by start-node.sh, never two on one Kubernetes node', () => {
    const spec = statefulSet().spec!;
    expect(spec.replicas).toBe(6);
    expect(env(redisContainer(), 'CLUSTER_NODES'), 'CLUSTER_NODES = replicas').toBe(String(spec.replicas));
    expect(env(job().spec?.template.spec?.containers[0], 'CLUSTER_NODES'), "the Job's CLUSTER_NODES = replicas").toBe(String(spec.replicas));
    const conf = redisConf();
    expect(conf.get('cluster-enabled')).toBe('yes');
    expect(conf.get('cluster-config-file')).toBe('/data/nodes.conf');
    expect(conf.get('appendonly'), 'a restarted primary must come back with its data').toBe('yes');
    expect(conf.get('maxmemory-policy'), 'history must never be evicted silently').toBe('noeviction');
    expect(redisContainer().command).toEqual(['sh', '/etc/redis/start-node.sh']);
    expect(Object.keys(files()).sort()).toEqual(['create-cluster.sh', 'probe-ready.sh', 'redis.conf', 'start-node.sh']);
    expect(spec.volumeClaimTemplates?.map((t) => [t.metadata?.name, t.spec?.accessModes])).toEqual([['data', ['ReadWriteOnce']]]);
    expect(redisContainer().volumeMounts?.find((m) => m.name === 'data')?.mountPath).toBe('/data');
    const antiAffinity = spec.template.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
    expect(antiAffinity.map((a) => a.topologyKey)).toEqual(['kubernetes.io/hostname']);
    const podLabels = spec.template.metadata?.labels;
    expect(matches(spec.selector.matchLabels, podLabels), 'StatefulSet selector').toBe(true);
    expect(matches(antiAffinity[0]?.labelSelector?.matchLabels, podLabels), 'anti-affinity selects the Redis pods').toBe(true);
    for (const spread of spec.template.spec?.topologySpreadConstraints ?? []) expect(matches(spread.labelSelector?.matchLabels, podLabels)).toBe(true);
  });

  it('a headless Service names every pod, not-ready ones too (the Job reaches them before the cluster exists)', () => {
    const service = named(ofKind<IService>(objects, 'Service'), name);
    expect(statefulSet().spec?.serviceName).toBe(name);
    expect(service.spec?.clusterIP).toBe('None');
    expect(service.spec?.publishNotReadyAddresses).toBe(true);
    expect(matches(service.spec?.selector, statefulSet().spec?.template.metadata?.labels)).toBe(true);
    const ports = (redisContainer().ports ?? []).map((p) => [p.name, p.containerPort]);
    expect(ports).toEqual([['redis', 6379], ['cluster-bus', 16379]]);
    for (const port of service.spec?.ports ?? []) expect(ports.map(([n]) => n)).toContain(port.targetPort);
  });

  it('resources: the whole core a node can use, no CPU limit; memory request = limit = twice maxmemory (fork headroom)', () => {
    const resources = redisContainer().resources;
    expect(resources?.requests?.cpu).toBe('1');
    expect(resources?.limits?.cpu).toBeUndefined();
    expect(resources?.requests?.memory).toBe(resources?.limits?.memory);
    const maxmemory = /^(\d+)gb$/.exec(redisConf().get('maxmemory') ?? '');
    expect(maxmemory, 'maxmemory in gb').not.toBeNull();
    expect(mebibytes(resources?.limits?.memory ?? '0')).toBe(2 * 1024 * Number(maxmemory![1]));
  });

  it('the create Job runs redis-cli --cluster create with one replica per primary, without a prompt', () => {
    const container = job().spec?.template.spec?.containers[0];
    expect(container?.command).toEqual(['sh', '/etc/redis/create-cluster.sh']);
    expect(container?.image).toBe(redisContainer().image);
    expect(job().spec?.template.spec?.restartPolicy).toBe('Never');
    expect(job().spec?.ttlSecondsAfterFinished, 'a finished Job goes, so the next apply runs it again').toBeGreaterThan(0);
    expect(files()['create-cluster.sh']).toMatch(/redis-cli --cluster create \$addresses --cluster-replicas 1 --cluster-yes/);
    // The Job's pod carries the labels the NetworkPolicy admits.
    expect(job().spec?.template.metadata?.labels?.['app.kubernetes.io/part-of']).toBe('wirestream');
  });

  it('one Redis node evicted at a time; only Wirestream pods reach Redis, only Redis nodes the cluster bus', () => {
    const pdb = named(ofKind<IPodDisruptionBudget>(objects, 'PodDisruptionBudget'), name);
    expect(pdb.spec?.maxUnavailable).toBe(1);
    const podLabels = statefulSet().spec?.template.metadata?.labels;
    expect(matches(pdb.spec?.selector?.matchLabels, podLabels)).toBe(true);
    const policy = named(ofKind<INetworkPolicy>(objects, 'NetworkPolicy'), name);
    expect(matches(policy.spec?.podSelector.matchLabels, podLabels)).toBe(true);
    const rules = (policy.spec?.ingress ?? []).map((r) => ({ from: r.from?.map((f) => f.podSelector?.matchLabels), ports: r.ports?.map((p) => p.port) }));
    expect(rules).toEqual([
      { from: [{ 'app.kubernetes.io/part-of': 'wirestream' }], ports: [6379] },
      { from: [statefulSet().spec?.selector.matchLabels], ports: [16379] },
    ]);
    for (const app of apps) expect(deploymentOf(objects, app).spec?.template.metadata?.labels?.['app.kubernetes.io/part-of'], app).toBe('wirestream');
  });

  it('Redis pods and the Job run as the redis image user, read-only root filesystem, no capabilities, no API token', () => {
    for (const pod of [statefulSet().spec?.template.spec, job().spec?.template.spec]) {
      expect(pod?.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 999, runAsGroup: 999, seccompProfile: { type: 'RuntimeDefault' } });
      expect(pod?.automountServiceAccountToken).toBe(false);
      expect(pod?.containers[0]?.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
      expect(pod?.containers[0]?.image, 'a pinned Redis version').toMatch(/^redis:\d+\.\d+\.\d+$/);
    }
    expect(statefulSet().spec?.template.spec?.securityContext?.fsGroup, 'the volume is writable for the redis user').toBe(999);
  });

  it('both apps on the cluster: REDIS_MODE=cluster, REDIS_URL a seed through the headless Service; ingest waits for a replica', () => {
    const service = named(ofKind<IService>(objects, 'Service'), name);
    const redisPort = service.spec?.ports?.find((p) => p.name === 'redis')?.port;
    for (const app of apps) {
      const config = configMapOf(objects, app);
      expect(config.REDIS_MODE, app).toBe('cluster');
      expect(config.REDIS_URL, app).toBe(`redis://${name}:${redisPort}`);
    }
    expect(configMapOf(objects, 'ingest').INGEST_REDIS_WAIT_REPLICAS).toBe('1');
    expect(configMapOf(objects, 'gateway').INGEST_REDIS_WAIT_REPLICAS).toBeUndefined();
    // The production overlay stays on one Redis.
    for (const app of apps) expect(configMapOf(renders.production!, app).REDIS_MODE ?? 'standalone', app).toBe('standalone');
  });

  it('the runbook applies the Redis objects first with -l app.kubernetes.io/component=redis: that selects exactly the component', () => {
    const selected = objects.filter((o) => o.metadata.labels?.['app.kubernetes.io/component'] === 'redis');
    const summary = selected.map((o) => `${o.kind}/${o.metadata.name.replace(/-[a-z0-9]{10}$/, '-<hash>')}`).sort();
    expect(summary).toEqual([...redisClusterObjects].sort());
  });

  it('everything in the production namespace, the production settings kept', () => {
    for (const object of objects) expect(object.metadata.namespace, `${object.kind} ${object.metadata.name}`).toBe('wirestream');
    expect(configMapOf(objects, 'ingest').INGEST_FROM_BEGINNING).toBe('false');
    expect(configMapOf(objects, 'gateway').GATEWAY_TRUSTED_PROXY_HOPS).toBe(configMapOf(renders.production!, 'gateway').GATEWAY_TRUSTED_PROXY_HOPS);
  });
});
