import { readFileSync } from 'node:fs';
import { randomInt } from 'node:crypto';
import { createServer } from 'node:net';

/**
 * A TCP port that is free on 127.0.0.1 right now, for a test server to listen on.
 *
 * Picked at random *below* the kernel's ephemeral range (Linux: 32768-60999), then checked by
 * binding it. Ports the kernel hands out for `listen(0)` come from the ephemeral range, where any
 * outgoing connection on the machine may take one as its source port between our pick and the
 * server's bind; a busy machine running several test suites hits that race. Falls back to a
 * kernel pick when the range cannot be read or leaves no room.
 *
 * The port is free when this resolves, not reserved: servers started by this kit fail loudly
 * (and startKafka/startRedis pick again) when someone else binds it first.
 */
export async function freePort(): Promise<number> {
  const low = 20_000;
  const high = ephemeralRangeStart() - 1;
  if (high - low >= 1_000) {
    for (let attempt = 0; attempt < 50; attempt += 1) {
      const port = randomInt(low, high + 1);
      if ((await listenOn(port)) !== undefined) return port;
    }
  }
  const port = await listenOn(0);
  if (port === undefined) throw new Error('freePort: the kernel found no free port on 127.0.0.1');
  return port;
}

function ephemeralRangeStart(): number {
  try {
    const start = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(start) && start > 0 ? start : 0;
  } catch {
    return 0; // not Linux: use the kernel's pick
  }
}

/** Binds 127.0.0.1:port (0 = any), closes again; the bound port, or undefined when taken. */
function listenOn(port: number): Promise<number | undefined> {
  return new Promise((resolvePort) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolvePort(undefined));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => {
      const address = server.address();
      const bound = address !== null && typeof address !== 'string' ? address.port : undefined;
      server.close(() => resolvePort(bound));
    });
  });
}
