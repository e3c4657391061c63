/**
 * The soak's client process: N raw graphql-transport-ws sockets, each checking its own stream
 * (per partition every offset exactly once, in order) and, on the parent's request, a few of them
 * leaving and resubscribing with their last positions, as production clients do after a drop.
 * Positions are read with a regular expression, not JSON.parse, to keep the client cheap.
 */
import WebSocket from 'ws';

export interface ClientsStart {
  readonly url: string;
  readonly sockets: number;
  /** Documents, assigned round-robin: distinct operations in the gateway. */
  readonly queries: readonly string[];
}

export type ToClients = { type: 'start'; start: ClientsStart } | { type: 'churn'; count: number } | { type: 'report' } | { type: 'close' };

export interface ClientsReport {
  readonly delivered: number;
  readonly duplicates: number;
  /** Offsets skipped within a partition (a loss as the client sees it). */
  readonly gaps: number;
  readonly resumes: number;
  readonly recovered: number;
  readonly notRecovered: number;
  /** Closes the server initiated (e.g. 1013 slow consumer), by code; each is followed by a resume. */
  readonly serverCloses: Record<string, number>;
  readonly rssBytes: number;
}

export type FromClients = { type: 'ready'; sockets: number } | { type: 'report'; report: ClientsReport } | { type: 'closed' };

const POSITION = /"partition":(\d+),"offset":"(\d+)"(?:,"epoch":"([^"]+)")?/;

interface SoakClient {
  ws: WebSocket;
  readonly query: string;
  readonly last: Map<number, bigint>;
  epoch: string | undefined;
  open: boolean;
}

const totals = { delivered: 0, duplicates: 0, gaps: 0, resumes: 0, recovered: 0, notRecovered: 0 };
const serverCloses: Record<string, number> = {};
const clients: SoakClient[] = [];
let url = '';
let closingAll = false;

function connect(client: SoakClient, resume: boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, 'graphql-transport-ws', { perMessageDeflate: false });
    client.ws = ws;
    ws.on('error', reject);
    ws.on('open', () => ws.send('{"type":"connection_init"}'));
    ws.on('close', (code: number) => {
      client.open = false;
      if (closingAll) return;
      // The server closed us (slow consumer, drain…): come back and resume, as production clients do.
      serverCloses[String(code)] = (serverCloses[String(code)] ?? 0) + 1;
      setTimeout(() => {
        connect(client, client.epoch !== undefined).catch((err: unknown) => console.error('soak client: reconnect failed', err));
      }, 100 + Math.random() * 200);
    });
    ws.on('message', (data: Buffer) => {
      const text = data.toString();
      if (text.startsWith('{"type":"connection_ack"')) {
        const extensions = resume
          ? { resume: { epoch: client.epoch, positions: Object.fromEntries([...client.last].map(([p, o]) => [String(p), String(o)])) } }
          : {};
        ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: client.query, extensions } }));
        client.open = true;
        if (resume) totals.resumes++;
        resolve();
        return;
      }
      if (text.includes('"recovery":{"recovered":true')) {
        totals.recovered++;
        return;
      }
      if (text.includes('"recovery":{"recovered":false')) {
        totals.notRecovered++;
        return;
      }
      const match = POSITION.exec(text);
      if (!match) return;
      const partition = Number(match[1]);
      const offset = BigInt(match[2] as string);
      if (match[3] !== undefined) client.epoch = match[3];
      const last = client.last.get(partition);
      if (last !== undefined && offset <= last) {
        totals.duplicates++;
        return;
      }
      if (last !== undefined && offset > last + 1n) totals.gaps += Number(offset - last - 1n);
      client.last.set(partition, offset);
      totals.delivered++;
    });
  });
}

async function start({ sockets, queries, ...rest }: ClientsStart): Promise<void> {
  url = rest.url;
  // A few handshakes at a time: a connect storm is not what this benchmark measures.
  const batch = 100;
  for (let i = 0; i < sockets; i += batch) {
    const wave: Promise<void>[] = [];
    for (let j = i; j < Math.min(sockets, i + batch); j++) {
      const client: SoakClient = { ws: undefined as unknown as WebSocket, query: queries[j % queries.length] as string, last: new Map(), epoch: undefined, open: false };
      clients.push(client);
      wave.push(connect(client, false));
    }
    await Promise.all(wave);
  }
  process.send?.({ type: 'ready', sockets: clients.length } satisfies FromClients);
}

/** Closes `count` clients that have seen every partition and resubscribes them with their positions. */
function churn(count: number): void {
  const eligible = clients.filter((c) => c.open && c.epoch !== undefined && c.last.size >= 3);
  for (let i = 0; i < count && eligible.length > 0; i++) {
    const client = eligible.splice(Math.floor(Math.random() * eligible.length), 1)[0] as SoakClient;
    client.open = false;
    client.ws.removeAllListeners('close');
    client.ws.once('close', () => {
      connect(client, true).catch((err: unknown) => console.error('soak client: reconnect failed', err));
    });
    client.ws.close(1000);
  }
}

process.on('message', (message: ToClients) => {
  switch (message.type) {
    case 'start':
      start(message.start).catch((err: unknown) => {
        console.error(err);
        process.exit(1);
      });
      return;
    case 'churn':
      churn(message.count);
      return;
    case 'report':
      process.send?.({
        type: 'report',
        report: { ...totals, serverCloses, rssBytes: process.memoryUsage().rss },
      } satisfies FromClients);
      return;
    case 'close':
      closingAll = true;
      for (const client of clients) client.ws.close(1000);
      setTimeout(() => {
        process.send?.({ type: 'closed' } satisfies FromClients);
        process.exit(0);
      }, 1_000);
  }
});
