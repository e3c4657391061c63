// A real federation subgraph for look-up tests: test/support/subgraph-server.mjs (@apollo/subgraph on
// node:http) as a child process on a free port, counting what it is asked.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

export interface SubgraphCounts {
  readonly requests: number;
  readonly representations: number;
  readonly keys: readonly string[];
}

export interface TestSubgraph {
  readonly url: string;
  readonly port: number;
  /** What it answered so far: HTTP requests, representations in them, their ids. */
  counts(): Promise<SubgraphCounts>;
  stop(): Promise<void>;
}

const SERVER = fileURLToPath(new URL('./subgraph-server.mjs', import.meta.url));

/** Starts the subgraph; each entity resolves after a random delay up to `maxDelayMs`. */
export async function startSubgraph(options: { readonly maxDelayMs?: number; readonly port?: number } = {}): Promise<TestSubgraph> {
  const child: ChildProcess = spawn(process.execPath, [SERVER, String(options.port ?? 0), String(options.maxDelayMs ?? 0)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await Promise.race([
    once(child.stdout ?? child, 'data'),
    once(child, 'exit').then(() => {
      throw new Error('the test subgraph exited before listening');
    }),
  ])) as [Buffer];
  const port = Number(line.toString().trim());
  const base = `http://127.0.0.1:${port}`;
  return {
    url: `${base}/graphql`,
    port,
    counts: async () => (await (await fetch(`${base}/counts`)).json()) as SubgraphCounts,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The example schema with a looked-up field on ListingEvent and its entity type. */
export function withProfileLookup(sdl: string): string {
  return sdl.replace(/type ListingEvent \{/, 'type ListingEvent {\n  profile: ListingProfile @lookup(source: "listings", key: "id: listing_id")') + '\ntype ListingProfile {\n  id: ID!\n  title: String\n  views: Int\n}\n';
}
