import { spawn, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as connectTls } from 'node:tls';
import { freePort } from './freePort.js';
import { killWhenGone, onProcessExit } from './internal/processes.js';
import {
  prepareRedisSecurity,
  type RedisAclUser,
  type RedisProbeAccess,
  type RedisTlsFiles,
  type RedisTlsOptions,
} from './internal/redisSecurity.js';
import { waitFor } from './waitFor.js';

/** The machine's shared Redis (started before every session); tests must never touch it. */
const SHARED_REDIS_PORT = 6379;

/** Options of {@link startRedis}. */
export interface RedisServerOptions {
  /** Port to listen on, kept across {@link RedisServer.stop}/{@link RedisServer.start}. @default a free port */
  port?: number;
  /** Deadline for the first PONG after each start. @default 10_000 (10 seconds) */
  startTimeoutMs?: number;
  /** Deadline for exit after SIGTERM before SIGKILL. @default 5_000 (5 seconds) */
  stopTimeoutMs?: number;
  /** The redis-server binary. @default 'redis-server' (Debian's package, on PATH) */
  redisServerPath?: string;
  /**
   * TLS only (`--tls-port <port> --port 0`) with certificates from a throwaway CA (see
   * {@link RedisServer.tls}); `true` is `{ clientCertificates: 'optional' }`. @default false
   */
  tls?: boolean | RedisTlsOptions;
  /**
   * ACL users made at start. When any are given, the default user gets a random password
   * ({@link RedisServer.defaultPassword}), so a client without credentials gets NOAUTH. @default none
   */
  aclUsers?: readonly RedisAclUser[];
  /**
   * Keep the data across {@link RedisServer.stop}/{@link RedisServer.start} (a fault test: "Redis
   * restarts with its data"): an append-only file, fsync'd on every write, in a temporary
   * directory; `stop({ discardData: true })` deletes it (the next start is empty). @default false
   */
  persistent?: boolean;
}

/** A redis-server child process on 127.0.0.1. Stop it in afterAll. */
export interface RedisServer {
  /** `redis://127.0.0.1:<port>`, or `rediss://` with {@link RedisServerOptions.tls} (no credentials in it). */
  readonly url: string;
  /** The client port: the TLS port with {@link RedisServerOptions.tls}. */
  readonly port: number;
  /** The PEM files a client needs, with {@link RedisServerOptions.tls}; else undefined. */
  readonly tls: RedisTlsFiles | undefined;
  /** The default user's password when {@link RedisServerOptions.aclUsers} are given; else undefined (nopass). */
  readonly defaultPassword: string | undefined;
  /** The server's pid, or undefined while stopped. */
  readonly pid: number | undefined;
  /**
   * Starts the server again on the same port after {@link stop} (a fault test: "Redis is down for
   * 10 s"). Resolves once it answers PING. No-op while running. Data survives a restart only with
   * {@link RedisServerOptions.persistent}.
   */
  start(): Promise<void>;
  /**
   * SIGTERM, then SIGKILL after `stopTimeoutMs`; resolves once the process has exited and its port
   * is free. No-op while stopped (but `discardData` still deletes the data). `discardData`: with
   * {@link RedisServerOptions.persistent}, delete the data too.
   */
  stop(options?: { readonly discardData?: boolean }): Promise<void>;
}

/**
 * Starts a private `redis-server` on a free port: no persistence, loopback only, a child of this
 * process (not daemonized) so it goes away with the test run, also on a crash.
 *
 * @example
 * const redis = await startRedis();
 * const client = new Redis(redis.url);
 * afterAll(() => redis.stop());
 */
export async function startRedis(options: RedisServerOptions = {}): Promise<RedisServer> {
  const {
    startTimeoutMs = 10_000, // 10 seconds
    stopTimeoutMs = 5_000, // 5 seconds
    redisServerPath = 'redis-server',
  } = options;
  const security = await prepareRedisSecurity(options.tls, options.aclUsers);
  let port = options.port ?? (await freeNonSharedPort());
  if (port === SHARED_REDIS_PORT) {
    throw new Error(
      `startRedis: port ${SHARED_REDIS_PORT} is the machine's shared Redis; omit port to get a free one`,
    );
  }

  const dataDir = options.persistent === true ? mkdtempSync(join(tmpdir(), 'wirestream-redis-')) : undefined;
  // --save '' and --appendonly no: nothing touches disk, so every start is empty; persistent: an
  // append-only file fsync'd on every write, so a SIGTERM'd server comes back with everything.
  const persistenceArgs = dataDir === undefined
    ? ['--save', '', '--appendonly', 'no']
    : ['--save', '', '--dir', dataDir, '--appendonly', 'yes', '--appendfsync', 'always'];
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let removeExitHook: () => void = () => {};

  async function start(): Promise<void> {
    if (child !== undefined) return;
    if (await accepts(port)) {
      throw new Error(`startRedis: 127.0.0.1:${port} is already in use; omit port to get a free one`);
    }
    const proc = spawn(
      redisServerPath,
      [
        ...security.portArgs(port),
        '--bind', '127.0.0.1', ...persistenceArgs, '--daemonize', 'no',
        ...security.userArgs,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    // Keep the last lines for error messages, and drain the pipes so Redis never blocks on them.
    let output = '';
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString('utf8')).slice(-4_000);
    };
    proc.stdout.on('data', keep);
    proc.stderr.on('data', keep);
    let exitInfo: string | undefined;
    exited = new Promise((resolveExit) => {
      proc.once('exit', (code, signal) => {
        exitInfo = `exited with ${String(code ?? signal)}`;
        resolveExit();
      });
    });
    const spawnError = once(proc, 'spawn').then(
      () => undefined,
      // A ChildProcess emits an Error when the binary cannot run (ENOENT, EACCES).
      (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
    );
    const failedToSpawn = await spawnError;
    if (failedToSpawn !== undefined) {
      throw new Error(
        `startRedis: could not run ${redisServerPath} (${failedToSpawn.message}); ` +
          "install Debian's redis-server (apt-get install -y redis-server, or run infra/redis/start.sh once)",
        { cause: failedToSpawn },
      );
    }
    child = proc;
    const pid = proc.pid;
    if (pid !== undefined) {
      removeExitHook = onProcessExit(() => process.kill(pid, 'SIGKILL'));
      killWhenGone(pid);
    }

    try {
      await waitFor(
        async () => {
          if (exitInfo !== undefined) {
            // Debian's build has TLS; one without it refuses the tls-* directives at once.
            const noTls = options.tls !== undefined && options.tls !== false && /Bad directive|tls/i.test(output)
              ? ` (was ${redisServerPath} built with TLS? \`redis-server --tls-port 1 --port 0\` tells)`
              : '';
            throw new Error(`redis-server ${exitInfo}${noTls}:\n${output.trim()}`);
          }
          // The answer must come from our process: another server on the port would answer too.
          return (await serverPid(port, security.probe)) === pid;
        },
        { timeoutMs: startTimeoutMs, intervalMs: 20, message: `our redis-server (pid ${String(pid)}) to answer on 127.0.0.1:${port}` },
      );
    } catch (error) {
      await stop();
      throw new Error(`startRedis: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }

  async function stop(stopOptions: { readonly discardData?: boolean } = {}): Promise<void> {
    await stopProcess();
    if (stopOptions.discardData === true && dataDir !== undefined) {
      // Empty the directory (redis-server needs it to exist at the next start).
      rmSync(dataDir, { recursive: true, force: true });
      mkdirSync(dataDir, { recursive: true });
    }
  }

  async function stopProcess(): Promise<void> {
    const proc = child;
    if (proc === undefined) return;
    child = undefined;
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), stopTimeoutMs);
      await exited;
      clearTimeout(timer);
    }
    removeExitHook();
  }

  // Free ports are checked, not reserved: when we chose the port and lost it, choose again.
  for (let attempt = 1; ; attempt += 1) {
    try {
      await start();
      break;
    } catch (error) {
      const lostPort = error instanceof Error && /already in use/i.test(error.message);
      if (options.port !== undefined || !lostPort || attempt >= 3) throw error;
      port = await freeNonSharedPort();
    }
  }
  return {
    url: `${security.files === undefined ? 'redis' : 'rediss'}://127.0.0.1:${port}`,
    port,
    tls: security.files,
    defaultPassword: security.defaultPassword,
    get pid() {
      return child?.pid;
    },
    start,
    stop,
  };
}

async function freeNonSharedPort(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port !== SHARED_REDIS_PORT) return port;
  }
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolveAccepts) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.setTimeout(1_000, () => {
      socket.destroy();
      resolveAccepts(false);
    });
    socket.once('connect', () => {
      socket.destroy();
      resolveAccepts(true);
    });
    socket.once('error', () => resolveAccepts(false));
  });
}

/**
 * The pid of the Redis answering on 127.0.0.1:port (`INFO server` → `process_id`), or undefined
 * on refusal, timeout, a failed AUTH or a server still loading. One fresh connection per call,
 * over TLS and after `AUTH default <password>` when the server needs them.
 */
function serverPid(port: number, access: RedisProbeAccess): Promise<number | undefined> {
  return new Promise((resolvePid) => {
    const socket: Socket =
      access.tls === undefined
        ? connect({ port, host: '127.0.0.1' })
        : connectTls({ port, host: '127.0.0.1', servername: 'localhost', ...access.tls });
    let reply = '';
    const done = (pid: number | undefined): void => {
      socket.destroy();
      resolvePid(pid);
    };
    socket.setTimeout(1_000, () => done(undefined));
    socket.once('error', () => done(undefined));
    socket.once(access.tls === undefined ? 'connect' : 'secureConnect', () => {
      const auth = access.password === undefined ? '' : `AUTH default ${access.password}\r\n`;
      socket.write(`${auth}INFO server\r\n`);
    });
    let authPending = access.password !== undefined;
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString('latin1');
      if (authPending) {
        if (!reply.includes('\r\n')) return;
        if (!reply.startsWith('+OK\r\n')) return done(undefined);
        reply = reply.slice('+OK\r\n'.length);
        authPending = false;
      }
      // A bulk string: $<length>\r\n<payload>\r\n; an error reply (-LOADING ...) means not ready.
      if (reply.startsWith('-')) return done(undefined);
      const header = /^\$(\d+)\r\n/.exec(reply);
      if (header === null || reply.length < header[0].length + Number(header[1])) return;
      const pid = /^process_id:(\d+)/m.exec(reply)?.[1];
      done(pid === undefined ? undefined : Number(pid));
    });
  });
}
