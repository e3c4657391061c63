/**
 * Factories of the lazy members of a context: one function per member, defined ONCE per server
 * (module scope or server setup), never per context. Each receives the context it belongs
 * to, so one member can use another (`loader: (ctx) => createLoader(ctx.redis)`).
 *
 * `M` maps member names to the types the factories build; `B` is the owner's base
 * object whose properties the context also exposes.
 */
export type LazyFactories<M extends object, B extends object = object> = {
  readonly [K in keyof M]: (ctx: LazyContext<M, B>) => M[K];
};

/** A context: the base's properties plus the lazy members (members win on a name clash). */
export type LazyContext<M extends object, B extends object = object> = Omit<B, keyof M> & Readonly<M>;

// Per context we allocate exactly this holder and the Proxy around it; the handler below is
// one object shared by every context, so there are no per-context closures. `values` is
// created on the first materialization: a context whose members are never touched costs only
// these five fields.
interface Holder {
  readonly factories: Readonly<Record<PropertyKey, (ctx: unknown) => unknown>>;
  readonly base: object | undefined;
  /** Built members in completion order (so dependencies are disposed after their users). */
  values: Map<PropertyKey, unknown> | undefined;
  disposed: boolean;
  /** The context itself, handed to factories read through a property descriptor's getter. */
  proxy: object | undefined;
}

// Private: lets the module's functions find a proxy's holder without a per-context WeakMap entry.
const HOLDER = Symbol('wirestream.lazyContext.holder');

// Members being built right now, innermost last. Factories run synchronously, so one stack for
// the whole process is exact; it is never longer than the deepest chain of member dependencies.
const building: { holder: Holder; key: PropertyKey }[] = [];

const hasOwn = (object: object, key: PropertyKey): boolean => Object.prototype.hasOwnProperty.call(object, key);

function isMember(holder: Holder, key: PropertyKey): boolean {
  return hasOwn(holder.factories, key);
}

function member(holder: Holder, key: PropertyKey, ctx: unknown): unknown {
  if (holder.values?.has(key) === true) return holder.values.get(key);
  if (holder.disposed) {
    throw new Error(
      `Lazy context member "${String(key)}" was read after the context was disposed (its connection closed); ` +
        'building it now would leak a backend. Do not keep a context after its connection ends.',
    );
  }
  for (let i = 0; i < building.length; i++) {
    const frame = building[i]!;
    if (frame.holder === holder && frame.key === key) {
      const chain = building
        .slice(i)
        .filter((other) => other.holder === holder)
        .map((other) => String(other.key));
      throw new Error(
        `Lazy context cycle: ${[...chain, String(key)].join(' → ')}. ` +
          'A factory reads its own member through the context; break the cycle by building the shared part in one member.',
      );
    }
  }
  const factory = holder.factories[key]!;
  building.push({ holder, key });
  let value: unknown;
  try {
    value = factory(ctx);
  } finally {
    building.pop();
  }
  // Only a factory that returned is cached: one that threw runs again on the next read.
  (holder.values ??= new Map()).set(key, value);
  return value;
}

const handler: ProxyHandler<Holder> = {
  get(holder, key, receiver) {
    if (key === HOLDER) return holder;
    if (isMember(holder, key)) return member(holder, key, receiver);
    return holder.base === undefined ? undefined : (Reflect.get(holder.base, key) as unknown);
  },
  has(holder, key) {
    return isMember(holder, key) || (holder.base !== undefined && key in holder.base);
  },
  ownKeys(holder) {
    const keys = Reflect.ownKeys(holder.factories);
    if (holder.base === undefined) return keys;
    const seen = new Set(keys);
    return [...keys, ...Reflect.ownKeys(holder.base).filter((key) => !seen.has(key))];
  },
  getOwnPropertyDescriptor(holder, key) {
    if (isMember(holder, key)) {
      if (holder.values?.has(key) === true) {
        return { value: holder.values.get(key), writable: false, enumerable: true, configurable: true };
      }
      // An accessor, so `Object.keys(ctx)` or a logger walking the keys does not build members.
      return { get: () => member(holder, key, holder.proxy), enumerable: true, configurable: true };
    }
    if (holder.base === undefined) return undefined;
    const descriptor = Reflect.getOwnPropertyDescriptor(holder.base, key);
    // The proxy target (the holder) does not have these properties, so they must be reported
    // configurable (a Proxy invariant).
    return descriptor === undefined ? undefined : { ...descriptor, configurable: true };
  },
  set(holder, key, value) {
    // Members are built, not assigned. Other writes go to the base (the owner's mutable state).
    if (isMember(holder, key) || holder.base === undefined) return false;
    return Reflect.set(holder.base, key, value);
  },
  defineProperty() {
    return false;
  },
  deleteProperty() {
    return false;
  },
};

/**
 * Creates a context whose members are built by their factory on first read and then cached for
 * the context's life (the gateway: one per operation group, disposed with the group; a server of
 * your own: one per connection, say). Unread members cost nothing: per context this
 * allocates a Proxy and a five-field holder, whatever the number of factories.
 *
 * - Factories receive the context, so members may use each other; a cycle throws an Error
 *   naming the chain (`a → b → a`). Reads made before an async factory's first `await` are
 *   checked too; reads after it see the cached promise.
 * - Properties that are not members come from `base` (or are `undefined`).
 * - Members cannot be assigned or deleted; other assignments go to `base`.
 * - Close with {@link disposeLazyContext} when its owner ends.
 *
 * @param factories shared by every context of a server: define it once, not per context.
 * @param base the owner's values (an operation's dedup key and topic; a connection's id and scopes…).
 */
export function createLazyContext<M extends object>(factories: LazyFactories<M>): LazyContext<M>;
export function createLazyContext<M extends object, B extends object>(
  factories: LazyFactories<M, B>,
  base: B,
): LazyContext<M, B>;
export function createLazyContext(factories: LazyFactories<object, object>, base?: object): object {
  const holder: Holder = {
    factories: factories as unknown as Holder['factories'],
    base,
    values: undefined,
    disposed: false,
    proxy: undefined,
  };
  const proxy = new Proxy(holder, handler);
  holder.proxy = proxy;
  return proxy;
}

function holderOf(ctx: object, caller: string): Holder {
  const holder = (ctx as { [HOLDER]?: Holder })[HOLDER];
  if (holder === undefined) throw new TypeError(`${caller}: expected a context made by createLazyContext`);
  return holder;
}

/** Whether the member `key` of `ctx` has been built (read at least once, successfully). */
export function isMaterialized<M extends object, B extends object>(ctx: LazyContext<M, B>, key: keyof M): boolean {
  return holderOf(ctx, 'isMaterialized').values?.has(key) === true;
}

/** Names of the members of `ctx` built so far, in the order they finished building. */
export function materializedKeys<M extends object, B extends object>(ctx: LazyContext<M, B>): (keyof M)[] {
  const values = holderOf(ctx, 'materializedKeys').values;
  return values === undefined ? [] : ([...values.keys()] as (keyof M)[]);
}

/**
 * Releases the members of `ctx` that were built, when its connection closes: for each, in
 * reverse build order (users before what they use), awaits it if it is a promise, then calls
 * and awaits its `dispose()` or else its `close()` method, if it has one. Members never read
 * cost nothing here. Afterwards the context drops its members, and reading one throws.
 *
 * Every member is attempted; if any failed, rejects with an AggregateError of the failures.
 * Calling it again is a no-op.
 */
export async function disposeLazyContext<M extends object, B extends object>(ctx: LazyContext<M, B>): Promise<void> {
  const holder = holderOf(ctx, 'disposeLazyContext');
  if (holder.disposed) return;
  holder.disposed = true;
  const values = holder.values;
  holder.values = undefined;
  if (values === undefined) return;

  const failures: unknown[] = [];
  for (const value of [...values.values()].reverse()) {
    try {
      await release(value);
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0) {
    throw new AggregateError(failures, `disposeLazyContext: ${failures.length} member(s) failed to dispose`);
  }
}

async function release(value: unknown): Promise<void> {
  // An async factory's member is its promise; a rejected one has nothing to release.
  let resolved = value;
  if (isThenable(value)) {
    try {
      resolved = await value;
    } catch {
      return;
    }
  }
  if (typeof resolved !== 'object' && typeof resolved !== 'function') return;
  if (resolved === null) return;
  const target = resolved as { dispose?: unknown; close?: unknown };
  if (typeof target.dispose === 'function') await (target.dispose as () => unknown).call(target);
  else if (typeof target.close === 'function') await (target.close as () => unknown).call(target);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
