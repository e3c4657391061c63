import { describe, expect, it } from 'vitest';
import { createLogger, createMemorySink, DEFAULT_REDACT_PATHS } from './index.js';

describe('createLogger', () => {
  it('writes JSON lines with service, level label and ISO time', () => {
    const sink = createMemorySink();
    const logger = createLogger({ name: 'gateway', destination: sink });
    logger.info({ connections: 3 }, 'listening');
    expect(sink.lines).toHaveLength(1);
    const [line] = sink.lines;
    expect(line).toMatchObject({ level: 'info', service: 'gateway', connections: 3, msg: 'listening' });
    expect(line?.['time']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    // base replaces pino's pid/hostname: Kubernetes adds pod metadata already.
    expect(Object.keys(line ?? {}).sort()).toEqual(['connections', 'level', 'msg', 'service', 'time']);
  });

  it('respects the level, default info', () => {
    const sink = createMemorySink();
    const logger = createLogger({ name: 'ingest', destination: sink });
    logger.debug('hidden');
    logger.info('shown');
    const warnOnly = createLogger({ name: 'ingest', level: 'warn', destination: sink });
    warnOnly.info('hidden');
    warnOnly.warn('careful');
    warnOnly.error('broken');
    createLogger({ name: 'ingest', level: 'silent', destination: sink }).fatal('hidden');
    expect(sink.lines.map((line) => [line['level'], line['msg']])).toEqual([
      ['info', 'shown'],
      ['warn', 'careful'],
      ['error', 'broken'],
    ]);
  });

  it('redacts secret-looking paths by default', () => {
    const sink = createMemorySink();
    const logger = createLogger({ name: 'gateway', destination: sink });
    logger.info(
      {
        password: 'p1',
        token: 't1',
        authorization: 'Bearer top',
        kafka: { sasl: 'plain', password: 'p2' },
        req: { headers: { authorization: 'Bearer h', cookie: 'session=1', host: 'example.org' } },
        connectionParams: { authToken: 'jwt', clientVersion: '1.2' },
        socket: { id: 's1', connectionParams: { token: 'jwt2' } },
        user: { apiKey: 'k', name: 'ada' },
      },
      'connection_init',
    );
    const line = sink.lines[0];
    expect(line).toMatchObject({
      password: '[Redacted]',
      token: '[Redacted]',
      authorization: '[Redacted]',
      kafka: { sasl: 'plain', password: '[Redacted]' },
      req: { headers: { authorization: '[Redacted]', cookie: '[Redacted]', host: 'example.org' } },
      connectionParams: { authToken: '[Redacted]', clientVersion: '[Redacted]' },
      socket: { id: 's1', connectionParams: { token: '[Redacted]' } },
      user: { apiKey: '[Redacted]', name: 'ada' },
    });
    expect(JSON.stringify(sink.lines)).not.toMatch(/p1|p2|t1|top|Bearer|jwt|session=1|"k"/);
  });

  it('adds extra redact paths to the defaults', () => {
    const sink = createMemorySink();
    const logger = createLogger({ name: 'gateway', destination: sink, redact: ['config.redisUrl'] });
    logger.info({ config: { redisUrl: 'redis://:pw@h:6379', port: 1 }, password: 'x' });
    expect(sink.lines[0]).toMatchObject({ config: { redisUrl: '[Redacted]', port: 1 }, password: '[Redacted]' });
    expect(DEFAULT_REDACT_PATHS).toContain('*.connectionParams.*');
  });

  it('serializes err and error fields, including non-Error values', () => {
    const sink = createMemorySink();
    const logger = createLogger({ name: 'ingest', destination: sink });
    const cause = Object.assign(new Error('ECONNREFUSED'), { code: 'ECONNREFUSED' });
    logger.error({ err: new Error('publish failed', { cause }) }, 'redis');
    logger.error({ error: 'a string was thrown' }, 'odd');
    expect(sink.lines[0]?.['err']).toMatchObject({
      type: 'Error',
      message: 'publish failed',
      cause: { type: 'Error', message: 'ECONNREFUSED', code: 'ECONNREFUSED' },
    });
    expect(sink.lines[1]?.['error']).toEqual({ type: 'NonError', message: 'a string was thrown' });
  });

  it('child loggers keep service and redaction', () => {
    const sink = createMemorySink();
    const child = createLogger({ name: 'gateway', destination: sink }).child({ connectionId: 'c1' });
    child.warn({ token: 'secret' }, 'slow consumer');
    expect(sink.lines[0]).toMatchObject({ service: 'gateway', connectionId: 'c1', token: '[Redacted]' });
    sink.clear();
    expect(sink.lines).toHaveLength(0);
  });

  it('fails fast on an empty name', () => {
    expect(() => createLogger({ name: ' ' })).toThrow(/non-empty service name/);
  });
});
