import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { findRepoRoot } from './findRepoRoot.js';
import { freePort } from './freePort.js';
import { isAlive, onProcessExit, runScript } from './internal/processes.js';

/** Options of {@link startKafka}. */
export interface KafkaBrokerOptions {
  /** Client (PLAINTEXT) port. @default a free port */
  port?: number;
  /** KRaft controller port. @default a free port */
  controllerPort?: number;
  /** Deadline for the broker to answer its first request. @default 60_000 (60 seconds) */
  startTimeoutMs?: number;
  /**
   * Where config, logs and partitions live. When given, the caller owns it: it is kept after
   * {@link KafkaBroker.stop} and reused (not reformatted) by the next start.
   * @default a fresh folder under `<repo>/.wirestream/testkit/`, deleted by stop()
   */
  dataDir?: string;
}

/**
 * Extra start.sh arguments for one attempt: the secured mode of {@link startSecuredKafka} picks
 * its listener ports here, fresh on each attempt like the plain ones. Internal.
 */
export type ExtraStartArgs = () => Promise<string[]>;

/** A running single-node Kafka broker (KRaft). Stop it in afterAll / globalSetup teardown. */
export interface KafkaBroker {
  /** Bootstrap servers for a client, e.g. `['127.0.0.1:41234']`. */
  readonly brokers: string[];
  readonly port: number;
  /** Wall time of `infra/kafka/start.sh`: storage format, JVM start, first answered request. */
  readonly startupMs: number;
  /** KRaft controller port (kept across {@link KafkaBroker.restart}). */
  readonly controllerPort: number;
  readonly dataDir: string;
  /** The broker JVM's pid (also its process group id); a new one after {@link KafkaBroker.restart}. */
  readonly pid: number;
  /**
   * Stops the broker and starts it again on the same ports and data dir, keeping topics, offsets
   * and committed group offsets (a fault test: "the broker restarts mid-stream"). Resolves once
   * it answers again. `kill: true` SIGKILLs instead of a clean shutdown.
   */
  restart(options?: { kill?: boolean }): Promise<void>;
  /** Stops the JVM (whole process group), waits until it is gone, deletes an owned data dir. Idempotent. */
  stop(): Promise<void>;
}

const FETCH_TIMEOUT_MS = 10 * 60_000; // 10 minutes: a cold Maven fetch on a slow mirror
const STOP_TIMEOUT_S = 15;
// Free ports are checked, not reserved; when we chose them and lost the race, choose again.
const PORT_ATTEMPTS = 3;

/**
 * Starts the real Apache Kafka broker from `infra/kafka/` (fetched from Maven Central on first
 * use) on free ports. The shell scripts are the single source of the broker's config; this only
 * runs them. The broker never outlives the test process: an exit handler kills it, and
 * start.sh's `--watch-pid` watchdog covers a SIGKILLed runner.
 *
 * A run that already has a broker (see {@link sharedKafkaFromEnv}) should use that instead.
 */
export function startKafka(options: KafkaBrokerOptions = {}): Promise<KafkaBroker> {
  return startKafkaWith(options, () => Promise.resolve([]));
}

/** {@link startKafka} with extra start.sh arguments (chosen again on each port attempt). Internal. */
export async function startKafkaWith(options: KafkaBrokerOptions, extraArgs: ExtraStartArgs): Promise<KafkaBroker> {
  const { startTimeoutMs = 60_000 } = options; // 60 seconds
  if (options.port !== undefined && options.port === options.controllerPort) {
    throw new Error(`startKafka: port and controllerPort must differ, both are ${options.port}`);
  }
  const root = findRepoRoot();
  const kafkaDir = join(root, 'infra', 'kafka');
  await runScript(join(kafkaDir, 'fetch.sh'), [], { timeoutMs: FETCH_TIMEOUT_MS });

  const ownsDataDir = options.dataDir === undefined;
  const portsChosenHere = options.port === undefined || options.controllerPort === undefined;
  for (let attempt = 1; ; attempt += 1) {
    const port = options.port ?? (await freePort());
    let controllerPort = options.controllerPort ?? (await freePort());
    while (controllerPort === port) controllerPort = await freePort();

    let dataDir: string;
    if (options.dataDir === undefined) {
      const parent = join(root, '.wirestream', 'testkit');
      mkdirSync(parent, { recursive: true });
      pruneStaleDataDirs(parent);
      dataDir = mkdtempSync(join(parent, `kafka-${port}-`));
    } else {
      dataDir = options.dataDir;
    }

    const extra = await extraArgs();
    const started = performance.now();
    const start = (): Promise<number> => runStart({ kafkaDir, port, controllerPort, dataDir, startTimeoutMs, extra });
    let pid: number;
    try {
      pid = await start();
    } catch (error) {
      // start.sh kills the broker on its own timeout, but not if it was itself killed.
      await runScript(join(kafkaDir, 'stop.sh'), ['--data-dir', dataDir, '--kill'], { timeoutMs: 20_000 }).catch(
        () => undefined,
      );
      if (ownsDataDir) rmSync(dataDir, { recursive: true, force: true });
      const message = error instanceof Error ? error.message : String(error);
      if (portsChosenHere && attempt < PORT_ATTEMPTS && /already in use/i.test(message)) continue;
      throw new Error(`startKafka: ${message}`, { cause: error });
    }
    const startupMs = Math.round(performance.now() - started);
    return createHandle({ kafkaDir, dataDir, ownsDataDir, port, controllerPort, pid, startupMs, start });
  }
}

/** Runs start.sh (storage is formatted only on the first start of a data dir); resolves to the JVM's pid. */
async function runStart(props: {
  kafkaDir: string;
  port: number;
  controllerPort: number;
  dataDir: string;
  startTimeoutMs: number;
  extra: readonly string[];
}): Promise<number> {
  const { kafkaDir, port, controllerPort, dataDir, startTimeoutMs, extra } = props;
  await runScript(
    join(kafkaDir, 'start.sh'),
    [
      '--port', String(port),
      '--controller-port', String(controllerPort),
      '--data-dir', dataDir,
      '--timeout', String(Math.ceil(startTimeoutMs / 1000)),
      '--watch-pid', String(process.pid),
      ...extra,
    ],
    // start.sh enforces the readiness deadline itself; this margin covers formatting storage.
    { timeoutMs: startTimeoutMs + 30_000 },
  );
  return Number(readFileSync(join(dataDir, 'kafka.pid'), 'utf8').trim());
}

function createHandle(props: {
  kafkaDir: string;
  dataDir: string;
  ownsDataDir: boolean;
  port: number;
  controllerPort: number;
  pid: number;
  startupMs: number;
  start: () => Promise<number>;
}): KafkaBroker {
  const { kafkaDir, dataDir, ownsDataDir, port, controllerPort, startupMs, start } = props;
  let pid = props.pid;
  // Negative pid: the broker leads its own process group (setsid in start.sh). Reads the current pid.
  const removeExitHook = onProcessExit(() => process.kill(-pid, 'SIGKILL'));
  let stopping: Promise<void> | undefined;
  return {
    brokers: [`127.0.0.1:${port}`],
    port,
    controllerPort,
    startupMs,
    dataDir,
    get pid() {
      return pid;
    },
    async restart({ kill = false } = {}) {
      if (stopping !== undefined) throw new Error('startKafka: restart() after stop()');
      // Never --kill by default here: a clean shutdown is the common case, and the data must survive.
      await runScript(
        join(kafkaDir, 'stop.sh'),
        ['--data-dir', dataDir, '--timeout', String(STOP_TIMEOUT_S), ...(kill ? ['--kill'] : [])],
        { timeoutMs: (STOP_TIMEOUT_S + 10) * 1000 },
      );
      pid = await start();
    },
    stop() {
      stopping ??= (async () => {
        // Throwaway data needs no clean shutdown; SIGKILL skips its 0.3-2 s.
        await runScript(
          join(kafkaDir, 'stop.sh'),
          ['--data-dir', dataDir, '--timeout', String(STOP_TIMEOUT_S), ...(ownsDataDir ? ['--kill'] : [])],
          { timeoutMs: (STOP_TIMEOUT_S + 10) * 1000 },
        );
        removeExitHook();
        if (ownsDataDir) rmSync(dataDir, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}

/**
 * Deletes data dirs of brokers that are gone without a stop() (a SIGKILLed test run: the watchdog
 * kills the JVM but nobody deletes its folder). A dir without a live pid is left alone for a
 * minute, as a concurrent start may still be formatting it.
 */
function pruneStaleDataDirs(parent: string): void {
  const graceMs = 60_000; // 1 minute
  for (const name of readdirSync(parent)) {
    if (!name.startsWith('kafka-')) continue;
    const dir = join(parent, name);
    try {
      const pid = Number(readFileSync(join(dir, 'kafka.pid'), 'utf8').trim());
      if (pid > 0 && isAlive(pid)) continue;
    } catch {
      // no pid file: never started, or stopped
    }
    try {
      if (Date.now() - statSync(dir).mtimeMs > graceMs) rmSync(dir, { recursive: true, force: true });
    } catch {
      // raced with another pruner
    }
  }
}
