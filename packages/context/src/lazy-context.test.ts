import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  createLazyContext,
  disposeLazyContext,
  isMaterialized,
  materializedKeys,
  type LazyContext,
  type LazyFactories,
} from './index.js';

interface Base {
  readonly connectionId: string;
  readonly scopes: readonly string[];
}

interface Redis {
  readonly name: 'redis';
  closed: boolean;
  close(): Promise<void>;
}

interface Members {
  readonly redis: Redis;
  readonly loader: { load(id: string): string; disposed: boolean; dispose(): void };
  readonly label: string;
}

// A server's factories, as an app would write them: defined once, counting calls and closes.
function serverFactories() {
  const calls: string[] = [];
  const closed: string[] = [];
  const factories: LazyFactories<Members, Base> = {
    redis: () => {
      calls.push('redis');
      const redis: Redis = {
        name: 'redis',
        closed: false,
        close() {
          redis.closed = true;
          closed.push('redis');
          return Promise.resolve();
        },
      };
      return redis;
    },
    loader: (ctx) => {
      calls.push('loader');
      const redis = ctx.redis; // one lazy member using another
      const loader = {
        disposed: false,
        load: (id: string) => `${redis.name}:${ctx.connectionId}:${id}`,
        dispose() {
          loader.disposed = true;
          closed.push('loader');
        },
      };
      return loader;
    },
    label: (ctx) => {
      calls.push('label');
      return `conn ${ctx.connectionId}`;
    },
  };
  return { factories, calls, closed };
}

const base: Base = { connectionId: 'c1', scopes: ['listings'] };

describe('createLazyContext', () => {
  it('builds nothing until a member is read', () => {
    const { factories, calls } = serverFactories();
    const ctx = createLazyContext(factories, base);
    expect(calls).toEqual([]);
    expect(ctx.connectionId).toBe('c1');
    expect(ctx.scopes).toEqual(['listings']);
    expect(calls).toEqual([]);
    expect(isMaterialized(ctx, 'redis')).toBe(false);
    expect(ctx.label).toBe('conn c1');
    expect(calls).toEqual(['label']);
    expect(isMaterialized(ctx, 'label')).toBe(true);
    expect(isMaterialized(ctx, 'redis')).toBe(false);
  });

  it('builds each member once per context and lets members use each other', () => {
    const { factories, calls } = serverFactories();
    const ctx = createLazyContext(factories, base);
    expect(ctx.loader.load('42')).toBe('redis:c1:42');
    expect(ctx.loader).toBe(ctx.loader);
    expect(ctx.redis).toBe(ctx.redis);
    expect(calls).toEqual(['loader', 'redis']);
    expect(materializedKeys(ctx)).toEqual(['redis', 'loader']);

    const other = createLazyContext(factories, { connectionId: 'c2', scopes: [] });
    expect(other.redis).not.toBe(ctx.redis);
    expect(calls).toEqual(['loader', 'redis', 'redis']);
  });

  it('infers the context type from the factories', () => {
    const { factories } = serverFactories();
    const ctx = createLazyContext(factories, base);
    expectTypeOf(ctx).toEqualTypeOf<LazyContext<Members, Base>>();
    expectTypeOf(ctx.redis).toEqualTypeOf<Redis>();
    expectTypeOf(ctx.connectionId).toEqualTypeOf<string>();

    const bare = createLazyContext<{ n: number }>({ n: () => 1 });
    expectTypeOf(bare.n).toEqualTypeOf<number>();
    expect(bare.n).toBe(1);
  });

  it('caches undefined and falsy results too', () => {
    let calls = 0;
    const ctx = createLazyContext<{ nothing: undefined; zero: number }>({
      nothing: () => {
        calls++;
        return undefined;
      },
      zero: () => {
        calls++;
        return 0;
      },
    });
    expect([ctx.nothing, ctx.nothing, ctx.zero, ctx.zero]).toEqual([undefined, undefined, 0, 0]);
    expect(calls).toBe(2);
  });

  it('reports a cycle with its chain', () => {
    interface Cyclic {
      a: number;
      b: number;
      c: number;
    }
    const ctx = createLazyContext<Cyclic>({ a: (c) => c.b + 1, b: (c) => c.c + 1, c: (c) => c.a + 1 });
    expect(() => ctx.a).toThrow('Lazy context cycle: a → b → c → a.');
    const self = createLazyContext<{ me: number }>({ me: (c) => c.me });
    expect(() => self.me).toThrow('Lazy context cycle: me → me.');
    // The failed attempt left nothing half-built behind.
    expect(materializedKeys(ctx)).toEqual([]);
  });

  it('does not cache a factory that threw', () => {
    let attempts = 0;
    const ctx = createLazyContext<{ flaky: string }>({
      flaky: () => {
        attempts++;
        if (attempts === 1) throw new Error('backend down');
        return 'ok';
      },
    });
    expect(() => ctx.flaky).toThrow('backend down');
    expect(ctx.flaky).toBe('ok');
    expect(attempts).toBe(2);
  });

  it('answers unknown properties from the base, or undefined', () => {
    const { factories } = serverFactories();
    const ctx = createLazyContext(factories, base) as unknown as Record<PropertyKey, unknown>;
    expect(ctx['nope']).toBeUndefined();
    expect(ctx['then']).toBeUndefined(); // so `await ctx` does not treat it as a promise
    const bare = createLazyContext<{ n: number }>({ n: () => 1 }) as unknown as Record<string, unknown>;
    expect(Reflect.get(bare, 'toString')).toBeUndefined();
    expect(bare['connectionId']).toBeUndefined();
  });

  it('supports in, Object.keys and spreading without building on enumeration', () => {
    const { factories, calls } = serverFactories();
    const ctx = createLazyContext(factories, base);
    expect('redis' in ctx).toBe(true);
    expect('connectionId' in ctx).toBe(true);
    expect('nope' in ctx).toBe(false);
    expect(Object.keys(ctx)).toEqual(['redis', 'loader', 'label', 'connectionId', 'scopes']);
    expect(calls).toEqual([]);
    expect(Object.getOwnPropertyDescriptor(ctx, 'label')?.get?.()).toBe('conn c1');
    expect(calls).toEqual(['label']);
    const copy = { ...ctx };
    expect(copy.label).toBe('conn c1');
    expect(calls).toEqual(['label', 'redis', 'loader']);
  });

  it('refuses to assign or delete members; other writes go to the base', () => {
    const mutable = { connectionId: 'c1', scopes: [] as string[], lastSeenMs: 0 };
    const ctx = createLazyContext<{ n: number }, typeof mutable>({ n: () => 1 }, mutable);
    expect(() => {
      (ctx as { n: number }).n = 2;
    }).toThrow(TypeError);
    expect(() => {
      delete (ctx as { n?: number }).n;
    }).toThrow(TypeError);
    (ctx as { lastSeenMs: number }).lastSeenMs = 5;
    expect(mutable.lastSeenMs).toBe(5);
    expect(ctx.lastSeenMs).toBe(5);
  });
});

describe('disposeLazyContext', () => {
  it('disposes only built members, users before what they use, then refuses reads', async () => {
    const { factories, calls, closed } = serverFactories();
    const ctx = createLazyContext(factories, base);
    const loader = ctx.loader;
    const redis = ctx.redis;
    void ctx.label; // a string: nothing to dispose
    await disposeLazyContext(ctx);
    expect(closed).toEqual(['loader', 'redis']);
    expect(loader.disposed).toBe(true);
    expect(redis.closed).toBe(true);
    expect(() => ctx.redis).toThrow(/read after the context was disposed/);
    expect(isMaterialized(ctx, 'redis')).toBe(false);
    await disposeLazyContext(ctx); // second call is a no-op
    expect(closed).toEqual(['loader', 'redis']);
    expect(calls).toEqual(['loader', 'redis', 'label']);
  });

  it('does nothing for a context whose members were never read', async () => {
    const { factories, calls, closed } = serverFactories();
    const ctx = createLazyContext(factories, base);
    await disposeLazyContext(ctx);
    expect(calls).toEqual([]);
    expect(closed).toEqual([]);
  });

  it('awaits async members and prefers dispose() over close()', async () => {
    const log: string[] = [];
    const ctx = createLazyContext<{ client: Promise<{ close(): void }>; both: { dispose(): void; close(): void } }>({
      client: () => Promise.resolve({ close: () => log.push('client.close') }),
      both: () => ({ dispose: () => log.push('both.dispose'), close: () => log.push('both.close') }),
    });
    await ctx.client;
    void ctx.both;
    await disposeLazyContext(ctx);
    expect(log).toEqual(['both.dispose', 'client.close']);
  });

  it('attempts every member and reports all failures together', async () => {
    const log: string[] = [];
    const ctx = createLazyContext<{ a: { close(): void }; b: { close(): void }; c: { close(): void } }>({
      a: () => ({
        close: () => {
          throw new Error('a failed');
        },
      }),
      b: () => ({ close: () => log.push('b') }),
      c: () => ({
        close: () => {
          throw new Error('c failed');
        },
      }),
    });
    void [ctx.a, ctx.b, ctx.c];
    const failure = await disposeLazyContext(ctx).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(AggregateError);
    expect((failure as AggregateError).errors.map((error: Error) => error.message)).toEqual(['c failed', 'a failed']);
    expect(log).toEqual(['b']);
  });

  it('rejects objects that are not lazy contexts', () => {
    expect(() => isMaterialized({} as LazyContext<{ a: 1 }>, 'a')).toThrow(/expected a context made by createLazyContext/);
  });
});
