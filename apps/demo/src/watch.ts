#!/usr/bin/env node
// Watch a subscription from the terminal: one JSON line per event, with its Kafka position.
//   node apps/demo/dist/watch.js [--url ws://127.0.0.1:4000/graphql] [--token <JWT>] [--delta] ['subscription { ... }']
// It uses @wirestream/client, so it resumes by itself after a gateway restart or a dropped
// connection (no event missed or printed twice) and says on stderr when history could not cover a gap.
// --delta asks for delta payloads (extensions.delta "fossil") and prints them reconstructed: the
// same lines as without it, fewer bytes on the wire.
import WebSocket from 'ws';
import { createWirestreamClient } from '@wirestream/client';

const DEFAULT_QUERY = 'subscription { bidPlaced { listing_id bid_id bidder_id amount { amount_cents currency_code } placed_at } }';

const args = process.argv.slice(2);
let url = process.env['WIRESTREAM_URL'] ?? 'ws://127.0.0.1:4000/graphql';
let token = process.env['WIRESTREAM_TOKEN'] ?? '';
let query = DEFAULT_QUERY;
let delta = false;
for (let i = 0; i < args.length; i++) {
  const arg = args[i] as string;
  if (arg === '--url') url = args[++i] ?? url;
  else if (arg === '--token') token = args[++i] ?? token;
  else if (arg === '--delta') delta = true;
  else if (arg === '--help' || arg === '-h') {
    process.stdout.write(`usage: wirestream-watch [--url ${url}] [--token <JWT>] [--delta] ['${DEFAULT_QUERY}']\n`);
    process.exit(0);
  } else query = arg;
}

const client = createWirestreamClient({
  url,
  webSocketImpl: WebSocket,
  lazy: false,
  token: () => token,
  on: { closed: (event) => process.stderr.write(`disconnected (${(event as { code?: number }).code ?? '?'}): resuming\n`) },
});
process.stderr.write(`watching ${url}${delta ? ' (delta payloads)' : ''}\n  ${query}\n`);
const unsubscribe = client.subscribe(
  { query },
  {
    next: (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
    error: (err: unknown) => {
      process.stderr.write(`subscription error: ${err instanceof Error ? err.message : JSON.stringify(err)}\n`);
      process.exit(1);
    },
    complete: () => process.exit(0),
    onRecovery: ({ recovered, reason }) => process.stderr.write(recovered ? 'resumed: nothing missed\n' : `resumed, but events were missed: ${reason ?? 'no reason given'}\n`),
  },
  { delta },
);
const stop = () => {
  unsubscribe();
  void client.dispose();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
