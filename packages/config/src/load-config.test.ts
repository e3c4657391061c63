import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  ConfigError,
  booleanFlag,
  csvList,
  defineConfigSpec,
  durationMs,
  envVar,
  hostPort,
  loadConfig,
  port,
  renderConfigTable,
  url,
  z,
} from './index.js';

const spec = defineConfigSpec({
  port: envVar({ name: 'GATEWAY_PORT', schema: port(), default: 4000, description: 'HTTP/WebSocket listen port' }),
  redisUrl: envVar({
    name: 'REDIS_URL',
    schema: url({ protocols: ['redis', 'rediss'] }),
    default: 'redis://127.0.0.1:6379',
    description: 'Redis used as the event bus',
  }),
  kafkaBrokers: envVar({ name: 'KAFKA_BROKERS', schema: csvList(hostPort()), description: 'Kafka bootstrap brokers' }),
  logLevel: envVar({
    name: 'LOG_LEVEL',
    schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    default: 'info',
    description: 'Minimum level written',
  }),
  initTimeoutMs: envVar({
    name: 'CONNECTION_INIT_TIMEOUT_MS',
    schema: durationMs({ minMs: 1 }),
    default: 3_000,
    description: 'Time a socket has to send connection_init',
  }),
  jwtSecret: envVar({ name: 'JWT_SECRET', schema: z.string().min(16), secret: true, description: 'HMAC key for JWTs' }),
  allowedOrigins: envVar({
    name: 'ALLOWED_ORIGINS',
    schema: csvList(url()),
    optional: true,
    description: 'Browser origins allowed to connect; unset allows none',
  }),
  historyEnabled: envVar({ name: 'HISTORY_ENABLED', schema: booleanFlag(), default: true, description: 'Keep per-channel history' }),
});

const validEnv = {
  KAFKA_BROKERS: 'kafka-0:9092, kafka-1:9092',
  JWT_SECRET: 'a-very-long-secret-value',
};

function loadError(env: Record<string, string | undefined>, options?: { file?: string }): ConfigError {
  try {
    loadConfig(spec, env, options);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected loadConfig to throw');
}

describe('loadConfig', () => {
  it('parses and converts valid values, applying defaults', () => {
    const config = loadConfig(spec, { ...validEnv, GATEWAY_PORT: '8080', HISTORY_ENABLED: 'false' });
    expect(config).toEqual({
      port: 8080,
      redisUrl: 'redis://127.0.0.1:6379',
      kafkaBrokers: ['kafka-0:9092', 'kafka-1:9092'],
      logLevel: 'info',
      initTimeoutMs: 3_000,
      jwtSecret: 'a-very-long-secret-value',
      allowedOrigins: undefined,
      historyEnabled: false,
    });
  });

  it('infers the config type from the spec, optional variables as T | undefined', () => {
    const config = loadConfig(spec, validEnv);
    expectTypeOf(config.port).toEqualTypeOf<number>();
    expectTypeOf(config.kafkaBrokers).toEqualTypeOf<readonly string[]>();
    expectTypeOf(config.logLevel).toEqualTypeOf<'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'>();
    expectTypeOf(config.allowedOrigins).toEqualTypeOf<readonly string[] | undefined>();
    expectTypeOf(config.historyEnabled).toEqualTypeOf<boolean>();
  });

  it('returns a deeply frozen object', () => {
    const config = loadConfig(spec, validEnv);
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.kafkaBrokers)).toBe(true);
    expect(() => {
      (config as { port: number }).port = 1;
    }).toThrow(TypeError);
    expect(() => (config.kafkaBrokers as string[]).push('x:1')).toThrow(TypeError);
  });

  it('reports an invalid value with the variable, the expected form and the value received', () => {
    const error = loadError({ ...validEnv, GATEWAY_PORT: '70000' });
    expect(error.issues).toEqual([
      {
        variable: 'GATEWAY_PORT',
        key: 'port',
        source: 'env',
        problem: 'expected a port number (integer 0-65535)',
        received: '"70000"',
      },
    ]);
    expect(error.message).toContain('GATEWAY_PORT: expected a port number (integer 0-65535); received "70000"');
    expect(error.retriable).toBe(false);
  });

  it('reports every problem at once', () => {
    const error = loadError({
      GATEWAY_PORT: 'eighty',
      REDIS_URL: 'http://cache:6379',
      KAFKA_BROKERS: 'kafka-0:9092,kafka-1',
      LOG_LEVEL: 'verbose',
      CONNECTION_INIT_TIMEOUT_MS: '0',
    });
    expect(error.issues.map((issue) => issue.variable)).toEqual([
      'GATEWAY_PORT',
      'REDIS_URL',
      'KAFKA_BROKERS',
      'LOG_LEVEL',
      'CONNECTION_INIT_TIMEOUT_MS',
      'JWT_SECRET',
    ]);
    expect(error.message).toMatchInlineSnapshot(`
      "Invalid configuration (6 problems):
        - GATEWAY_PORT: expected a port number (integer 0-65535); received "eighty"
        - REDIS_URL: expected a URL with scheme redis: or rediss:; received "http://cache:6379"
        - KAFKA_BROKERS: entry 1: expected host:port (e.g. 127.0.0.1:9092); received "kafka-0:9092,kafka-1"
        - LOG_LEVEL: Invalid option: expected one of "fatal"|"error"|"warn"|"info"|"debug"|"trace"|"silent"; received "verbose"
        - CONNECTION_INIT_TIMEOUT_MS: expected a duration in milliseconds (integer >= 1); received "0"
        - JWT_SECRET: required but not set (HMAC key for JWTs)
      Fix these variables (environment or config file) and start again."
    `);
  });

  it('names the expected form of a missing required variable', () => {
    const error = loadError({ JWT_SECRET: validEnv.JWT_SECRET });
    expect(error.issues[0]?.problem).toBe(
      'required but not set; expected a comma-separated list of host:port (e.g. 127.0.0.1:9092) (Kafka bootstrap brokers)',
    );
  });

  it('masks secret values', () => {
    const error = loadError({ ...validEnv, JWT_SECRET: 'hunter2' });
    expect(error.issues[0]).toMatchObject({ variable: 'JWT_SECRET', received: '****' });
    expect(error.message).not.toContain('hunter2');
    expect(error.message).toContain('JWT_SECRET: Too small: expected string to have >=16 characters; received ****');
  });

  it('masks a secret even when a custom message echoes it', () => {
    const leaky = defineConfigSpec({
      token: envVar({
        name: 'API_TOKEN',
        schema: z.string().refine((value) => value.startsWith('tk_'), { error: (issue) => `bad token ${String(issue.input)}` }),
        secret: true,
        description: 'API token',
      }),
    });
    expect(() => loadConfig(leaky, { API_TOKEN: 'sk_live_123' })).toThrow('API_TOKEN: bad token ****; received ****');
  });

  describe('secrets from files (<NAME>_FILE)', () => {
    const secretsDir = mkdtempSync(join(tmpdir(), 'wirestream-config-secret-'));
    afterAll(() => rmSync(secretsDir, { recursive: true, force: true }));
    const secretFile = (name: string, content: string): string => {
      const path = join(secretsDir, name);
      writeFileSync(path, content);
      return path;
    };
    const { JWT_SECRET: _omitted, ...withoutSecret } = validEnv;

    it('reads a secret from the file its _FILE variable names, without the trailing newline', () => {
      const config = loadConfig(spec, { ...withoutSecret, JWT_SECRET_FILE: secretFile('jwt', 'a-secret-from-a-mounted-file\n') });
      expect(config.jwtSecret).toBe('a-secret-from-a-mounted-file');
    });

    it('validates the file content like the variable, masked', () => {
      const error = loadError({ ...withoutSecret, JWT_SECRET_FILE: secretFile('short', 'hunter2\n') });
      expect(error.issues[0]).toMatchObject({ variable: 'JWT_SECRET', received: '****' });
      expect(error.message).not.toContain('hunter2');
    });

    it('names the _FILE variable when both are set, the file is missing or empty', () => {
      const both = loadError({ ...validEnv, JWT_SECRET_FILE: secretFile('both', 'a-secret-from-a-mounted-file') });
      expect(both.issues[0]).toMatchObject({ variable: 'JWT_SECRET_FILE', problem: 'set JWT_SECRET or JWT_SECRET_FILE, not both' });
      const absent = loadError({ ...withoutSecret, JWT_SECRET_FILE: join(secretsDir, 'nope') });
      expect(absent.issues[0]?.variable).toBe('JWT_SECRET_FILE');
      expect(absent.issues[0]?.problem).toMatch(/^could not read the file holding JWT_SECRET: ENOENT/);
      const empty = loadError({ ...withoutSecret, JWT_SECRET_FILE: secretFile('empty', '\n') });
      expect(empty.issues[0]).toMatchObject({ variable: 'JWT_SECRET_FILE', problem: 'the file holding JWT_SECRET is empty' });
    });

    it('ignores _FILE for variables that are not secrets', () => {
      const config = loadConfig(spec, { ...validEnv, GATEWAY_PORT_FILE: secretFile('port', '5000') });
      expect(config.port).toBe(4000);
    });
  });

  it('treats blank values as not set', () => {
    const config = loadConfig(spec, { ...validEnv, GATEWAY_PORT: '', ALLOWED_ORIGINS: '   ' });
    expect(config.port).toBe(4000);
    expect(config.allowedOrigins).toBeUndefined();
  });

  it('truncates long values in messages', () => {
    const error = loadError({ ...validEnv, REDIS_URL: `redis://${'x'.repeat(500)}:6379 ` + '!' });
    expect(error.issues[0]?.received?.length).toBeLessThan(90);
  });
});

describe('booleanFlag', () => {
  const flag = booleanFlag();
  it.each([
    ['true', true],
    ['TRUE', true],
    ['1', true],
    ['false', false],
    [' False ', false],
    ['0', false],
  ])('parses %j as %s', (input, expected) => {
    expect(flag.parse(input)).toBe(expected);
  });

  it.each(['yes', 'no', 'on', '2', 'truthy'])('rejects %j instead of guessing', (input) => {
    const result = flag.safeParse(input);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toBe('expected a boolean (true, false, 1 or 0)');
  });
});

describe('config file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wirestream-config-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function writeJson(name: string, content: string): string {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  }

  it('provides values by variable name; the environment wins', () => {
    const file = writeJson(
      'ok.json',
      JSON.stringify({ GATEWAY_PORT: 5000, KAFKA_BROKERS: ['a:1', 'b:2'], HISTORY_ENABLED: false, LOG_LEVEL: 'warn' }),
    );
    const config = loadConfig(spec, { JWT_SECRET: validEnv.JWT_SECRET, LOG_LEVEL: 'debug' }, { file });
    expect(config).toMatchObject({ port: 5000, kafkaBrokers: ['a:1', 'b:2'], historyEnabled: false, logLevel: 'debug' });
  });

  it('reports unknown keys, bad values and bad JSON together with the other problems', () => {
    const file = writeJson('bad.json', JSON.stringify({ GATEWAY_PROT: 5000, GATEWAY_PORT: 'x', JWT_SECRET: { a: 1 } }));
    const error = loadError({ KAFKA_BROKERS: 'a:1' }, { file });
    expect(error.issues.map((issue) => [issue.variable, issue.source, issue.received])).toEqual([
      ['GATEWAY_PROT', 'file', undefined],
      ['JWT_SECRET', 'file', '****'],
      ['GATEWAY_PORT', 'file', '"x"'],
      ['JWT_SECRET', 'env', undefined],
    ]);
    expect(error.message).toContain('GATEWAY_PORT (from config file): expected a port number');

    const broken = writeJson('broken.json', '{ "GATEWAY_PORT": ');
    expect(loadError(validEnv, { file: broken }).issues[0]?.problem).toMatch(/^config file could not be read as JSON/);
    expect(loadError(validEnv, { file: join(dir, 'missing.json') }).issues[0]?.variable).toBe(join(dir, 'missing.json'));
  });
});

describe('spec definition', () => {
  it('fails fast on contradictory or malformed declarations', () => {
    expect(() => envVar({ name: 'gateway_port', schema: port(), description: '' })).toThrow(/upper snake case/);
    expect(() =>
      // @ts-expect-error a variable cannot have both a default and optional: true
      envVar({ name: 'A_B', schema: port(), default: 1, optional: true, description: '' }),
    ).toThrow(/either a default or optional/);
    expect(() =>
      defineConfigSpec({
        a: envVar({ name: 'SAME', schema: port(), description: '' }),
        b: envVar({ name: 'SAME', schema: port(), description: '' }),
      }),
    ).toThrow('SAME is read by both "a" and "b"');
  });
});

describe('renderConfigTable', () => {
  it('renders variable, default and description as Markdown', () => {
    expect(renderConfigTable(spec)).toBe(
      [
        '| Variable | Default | Description |',
        '| --- | --- | --- |',
        '| `GATEWAY_PORT` | `4000` | HTTP/WebSocket listen port |',
        '| `REDIS_URL` | `redis://127.0.0.1:6379` | Redis used as the event bus |',
        '| `KAFKA_BROKERS` | *required* | Kafka bootstrap brokers |',
        '| `LOG_LEVEL` | `info` | Minimum level written |',
        '| `CONNECTION_INIT_TIMEOUT_MS` | `3000` | Time a socket has to send connection_init |',
        '| `JWT_SECRET` | *required* | HMAC key for JWTs (secret; or a file holding it: `JWT_SECRET_FILE`) |',
        '| `ALLOWED_ORIGINS` | *optional* | Browser origins allowed to connect; unset allows none |',
        '| `HISTORY_ENABLED` | `true` | Keep per-channel history |',
      ].join('\n'),
    );
  });

  it('joins list defaults, escapes pipes and masks secret defaults', () => {
    const table = renderConfigTable(
      defineConfigSpec({
        brokers: envVar({ name: 'BROKERS', schema: csvList(hostPort()), default: ['a:1', 'b:2'], description: 'a | b' }),
        key: envVar({ name: 'DEV_KEY', schema: z.string(), default: 'dev-only', secret: true, description: 'dev key' }),
      }),
    );
    expect(table).toContain('| `BROKERS` | `a:1,b:2` | a \\| b |');
    expect(table).toContain('| `DEV_KEY` | `****` | dev key (secret; or a file holding it: `DEV_KEY_FILE`) |');
    expect(table).not.toContain('dev-only');
  });
});
