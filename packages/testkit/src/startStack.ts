import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, Partitioners, logLevel, type Admin, type ITopicConfig, type Message, type Producer, type RecordMetadata } from 'kafkajs';
import { createTopics } from './createTopics.js';
import { freePort } from './freePort.js';
import { sharedKafkaFromEnv } from './sharedKafka.js';
import { startApp, type AppProcess } from './startApp.js';
import { startKafka } from './startKafka.js';
import { startRedis, type RedisServer, type RedisServerOptions } from './startRedis.js';
import { uniqueName } from './uniqueName.js';
import { waitFor } from './waitFor.js';

/** Environment of a built app: a record, or built from the stack once its Redis, Kafka and directory exist. */
export type StackEnv = Readonly<Record<string, string>> | ((stack: Stack) => Readonly<Record<string, string>>);

/** Options of {@link startStack}. */
export interface StackOptions {
  /** Names the stack's temporary directory (`wirestream-<name>-…`), Kafka client and ingest group. */
  name: string;
  /**
   * The SDL both apps serve, written to `<dir>/schema.graphql` (their `SCHEMA_PATH`). Without it
   * no app starts with the stack; start them later with {@link Stack.startIngest} / {@link Stack.startGateway}.
   */
  schema?: string;
  /** Topics created (every partition with a leader) before the apps start. @default [] */
  topics?: readonly ITopicConfig[];
  /** The apps started with the stack, each waited for. @default ['ingest', 'gateway'] with `schema`, else [] */
  apps?: readonly ('ingest' | 'gateway')[];
  /** More environment for every ingest the stack starts (over REDIS_URL, SCHEMA_PATH, KAFKA_BROKERS, …). */
  ingestEnv?: StackEnv;
  /** More environment for every gateway the stack starts (over GATEWAY_AUTH_MODE=anonymous, GATEWAY_PORT, …). */
  gatewayEnv?: StackEnv;
  /** Files written into the stack's directory before the apps start, by name (a plugin, a schema directory's file). */
  files?: Readonly<Record<string, string>>;
  /** Options of the stack's own redis-server. @default {} */
  redis?: RedisServerOptions;
  /**
   * A Kafka the caller started (and stops), e.g. a secured broker's admin listener.
   * @default the run's shared broker ({@link SHARED_KAFKA_ENV}), or one started for this stack and stopped with it
   */
  brokers?: readonly string[];
  /** The log level of the stack's kafkajs client (its admin and producer). @default logLevel.ERROR */
  kafkaLogLevel?: logLevel;
  /** How long each step of {@link Stack.stop} may take before it is reported and skipped. @default 30_000 (30 seconds) */
  stopStepTimeoutMs?: number;
}

/** A built gateway the stack started, with its addresses. */
export interface GatewayProcess extends AppProcess {
  readonly port: number;
  /** `http://127.0.0.1:<port>` */
  readonly httpUrl: string;
  /** `ws://127.0.0.1:<port>/graphql` */
  readonly wsUrl: string;
  /** The gateway's `/stats` counters (subscriptions, groups, channels, confirmedChannels, …). */
  stats(): Promise<Record<string, number>>;
}

/** "Kafka + Redis + built apps" for one test file: see {@link startStack}. */
export interface Stack {
  /** A temporary directory, deleted by {@link stop}. */
  readonly dir: string;
  readonly brokers: readonly string[];
  readonly redis: RedisServer;
  /** A kafkajs client on {@link brokers}, and its admin and producer, connected. */
  readonly kafka: Kafka;
  readonly admin: Admin;
  /** Kafka's default (murmur2) partitioner, so a key lands where the Java client would put it. */
  readonly producer: Producer;
  /** `<dir>/schema.graphql` when the stack was given a schema. */
  readonly schemaPath: string | undefined;
  /** The ingest started with the stack (throws when `apps` had none). */
  readonly ingest: AppProcess;
  /** The gateway started with the stack (throws when `apps` had none). */
  readonly gateway: GatewayProcess;
  /** `<dir>/<name>` */
  path(name: string): string;
  /** Writes `text` to `<dir>/<name>` and returns its path. */
  writeFile(name: string, text: string): string;
  /** Sends with `acks: -1` (every in-sync replica) and returns what Kafka acknowledged. */
  send(topic: string, messages: Message[]): Promise<RecordMetadata[]>;
  /** Starts a built ingest and resolves once it joined its consumer group. */
  startIngest(options?: AppStartOptions): Promise<AppProcess>;
  /** Starts a built gateway and resolves once its `/readyz` answers 200. */
  startGateway(options?: AppStartOptions & { port?: number }): Promise<GatewayProcess>;
  /** Runs `step` first thing in {@link stop} (steps in reverse order of registration), bounded like the rest. */
  onStop(step: () => unknown): void;
  /**
   * Stops everything, each step bounded by `stopStepTimeoutMs`: the `onStop` steps, the producer and
   * admin, every app the stack started, Redis, a Kafka of its own, the directory. Never hangs
   * and never throws for a part that was not started; throws after the last step if any failed.
   */
  stop(): Promise<void>;
}

/** Options of {@link Stack.startIngest} and {@link Stack.startGateway}. */
export interface AppStartOptions {
  /** Environment over the stack's and the option's `ingestEnv`/`gatewayEnv`. */
  env?: Readonly<Record<string, string>>;
  /** Resolve as soon as the process is spawned. @default true */
  waitReady?: boolean;
}

/**
 * One test file's "Kafka + Redis + built apps": the run's shared Kafka broker (or one of its own),
 * a private redis-server, the topics, a temporary directory with the SDL, a connected producer, and
 * the built ingest and gateway as processes, each waited for (ingest joined its group, gateway
 * ready). A start that fails stops what it had started before rejecting, so a failed `beforeAll`
 * leaves nothing running and `afterAll(() => stack?.stop())` has nothing to wait for.
 *
 * @example
 * let stack: Stack;
 * beforeAll(async () => {
 *   stack = await startStack({ name: 'sse', schema: sdl, topics: [{ topic, numPartitions: 3 }] });
 * });
 * afterAll(() => stack?.stop());
 */
export async function startStack(options: StackOptions): Promise<Stack> {
  const { name, schema, topics = [], files = {}, redis: redisOptions = {}, apps = schema === undefined ? [] : ['ingest', 'gateway'] } = options;
  const {
    stopStepTimeoutMs = 30_000, // 30 seconds: an app's SIGTERM → SIGKILL is 15 s, Redis's 5 s
    kafkaLogLevel = logLevel.ERROR,
  } = options;
  const stops: (() => unknown)[] = [];
  const onStop: (() => unknown)[] = [];
  const started = new Set<AppProcess>();
  const dir = mkdtempSync(join(tmpdir(), `wirestream-${name.replace(/[^A-Za-z0-9._-]/g, '-')}-`));
  stops.push(() => rmSync(dir, { recursive: true, force: true }));
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => (stopping ??= shutdown([...onStop].reverse(), started, [...stops].reverse(), stopStepTimeoutMs));
  try {
    let brokers = options.brokers ?? sharedKafkaFromEnv()?.brokers;
    if (brokers === undefined) {
      const own = await startKafka();
      stops.push(() => own.stop());
      brokers = own.brokers;
    }
    const redis = await startRedis(redisOptions);
    stops.push(() => redis.stop({ discardData: true }));
    const kafka = new Kafka({ clientId: `${name}-test`, brokers: [...brokers], logLevel: kafkaLogLevel });
    const admin = kafka.admin();
    await admin.connect();
    stops.push(() => admin.disconnect());
    if (topics.length > 0) await createTopics(admin, [...topics]);
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    stops.push(() => producer.disconnect());
    for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
    const schemaPath = schema === undefined ? undefined : join(dir, 'schema.graphql');
    if (schemaPath !== undefined && schema !== undefined) writeFileSync(schemaPath, schema);

    const first: { ingest?: AppProcess | undefined; gateway?: GatewayProcess | undefined } = {};
    const stack: Stack = {
      dir,
      brokers,
      redis,
      kafka,
      admin,
      producer,
      schemaPath,
      get ingest() {
        if (first.ingest === undefined) throw new Error(`stack ${name}: no ingest started with it (options.apps)`);
        return first.ingest;
      },
      get gateway() {
        if (first.gateway === undefined) throw new Error(`stack ${name}: no gateway started with it (options.apps)`);
        return first.gateway;
      },
      path: (file) => join(dir, file),
      writeFile(file, text) {
        writeFileSync(join(dir, file), text);
        return join(dir, file);
      },
      send: (topic, messages) => producer.send({ topic, acks: -1, messages }),
      async startIngest({ env = {}, waitReady = true } = {}) {
        const app = startApp('ingest', {
          ...common(stack),
          KAFKA_BROKERS: stack.brokers.join(','),
          KAFKA_GROUP_ID: uniqueName(`${name}-ingest`),
          INGEST_HTTP_PORT: '0',
          ...envOf(options.ingestEnv, stack),
          ...env,
        });
        started.add(app);
        if (waitReady) await readyOrExit(app, app.waitForLog((l) => l['msg'] === 'joined consumer group', 'joined consumer group'));
        return app;
      },
      async startGateway({ env = {}, waitReady = true, port } = {}) {
        const at = port ?? (await freePort());
        const app = startApp('gateway', {
          ...common(stack),
          GATEWAY_HOST: '127.0.0.1',
          GATEWAY_PORT: String(at),
          GATEWAY_AUTH_MODE: 'anonymous',
          ...envOf(options.gatewayEnv, stack),
          ...env,
        });
        started.add(app);
        const httpUrl = `http://127.0.0.1:${at}`;
        const stats = async (): Promise<Record<string, number>> => (await (await fetch(`${httpUrl}/stats`)).json()) as Record<string, number>;
        if (waitReady) {
          const ready = waitFor(async () => (await fetch(`${httpUrl}/readyz`).catch(() => undefined))?.status === 200, {
            timeoutMs: 30_000,
            message: `gateway ${httpUrl}/readyz to answer 200`,
          });
          await readyOrExit(app, ready);
        }
        return { ...app, port: at, httpUrl, wsUrl: `ws://127.0.0.1:${at}/graphql`, stats };
      },
      onStop: (step) => void onStop.push(step),
      stop,
    };
    [first.ingest, first.gateway] = await Promise.all([
      apps.includes('ingest') ? stack.startIngest() : undefined,
      apps.includes('gateway') ? stack.startGateway() : undefined,
    ]);
    return stack;
  } catch (error) {
    await stop().catch(() => {}); // the start's error is the one worth reading
    throw error;
  }
}

function common(stack: Stack): Record<string, string> {
  return { REDIS_URL: stack.redis.url, ...(stack.schemaPath === undefined ? {} : { SCHEMA_PATH: stack.schemaPath }), LOG_LEVEL: 'info' };
}

function envOf(env: StackEnv | undefined, stack: Stack): Readonly<Record<string, string>> {
  return typeof env === 'function' ? env(stack) : (env ?? {});
}

/**
 * Resolves with `ready`, or rejects as soon as the app exits (a configuration it refuses exits at
 * once: no need to wait out the deadline); either failure names its last log lines and stderr.
 */
async function readyOrExit(app: AppProcess, ready: Promise<unknown>): Promise<void> {
  const exited = new Promise<never>((_, reject) => {
    const fail = (): void => reject(new Error(`${app.name} exited with ${String(app.child.exitCode ?? app.child.signalCode)} before it was ready`));
    if (app.child.exitCode !== null || app.child.signalCode !== null) fail();
    else app.child.once('exit', fail);
  });
  try {
    await Promise.race([ready, exited]);
  } catch (error) {
    ready.catch(() => {}); // the loser of the race must not surface as an unhandled rejection
    exited.catch(() => {});
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${app.name} logs: ${JSON.stringify(app.lines.slice(-10))}\n${app.stderr().slice(-2_000)}`, { cause: error });
  }
  exited.catch(() => {});
}

/**
 * The test's own steps first (its clients, browsers and servers talk to the apps), then every app in
 * parallel, then the stack's servers; each step bounded by `timeoutMs`. Throws once, at the end.
 */
async function shutdown(testSteps: readonly (() => unknown)[], apps: ReadonlySet<AppProcess>, stackSteps: readonly (() => unknown)[], timeoutMs: number): Promise<void> {
  const failures: unknown[] = [];
  const bounded = async (what: string, step: () => unknown): Promise<void> => {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not finish within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([Promise.resolve().then(step), deadline]);
    } catch (error) {
      failures.push(error);
    } finally {
      clearTimeout(timer);
    }
  };
  for (const step of testSteps) await bounded('an onStop step', step);
  await Promise.all([...apps].map((app) => bounded(`${app.name} (pid ${String(app.child.pid)})`, () => app.stop())));
  for (const step of stackSteps) await bounded('a stack step', step);
  if (failures.length > 0) {
    throw new AggregateError(failures, `stack stop: ${failures.length} step(s) failed: ${failures.map((f) => (f instanceof Error ? f.message : String(f))).join('; ')}`);
  }
}
