#!/usr/bin/env node
// Watch a subscription from the terminal: one JSON line per event, with its Kafka position.
//   node apps/demo/dist/watch.js [--url ws://127.0.0.1:4000/graphql] [--delta] ['subscription { ... }']
// --delta asks for delta payloads (extensions.delta "fossil") and prints them reconstructed: the
// same lines as without it, fewer bytes on the wire.
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { DELTA_FOSSIL, createDeltaReader } from '@wirestream/delta';

const DEFAULT_QUERY = 'subscription { bidPlaced { listing_id bid_id bidder_id amount { amount_cents currency_code } placed_at } }';

const args = process.argv.slice(2);
let url = process.env['WIRESTREAM_URL'] ?? 'ws://127.0.0.1:4000/graphql';
let query = DEFAULT_QUERY;
let delta = false;
for (let i = 0; i < args.length; i++) {
  const arg = args[i] as string;
  if (arg === '--url') url = args[++i] ?? url;
  else if (arg === '--delta') delta = true;
  else if (arg === '--help' || arg === '-h') {
    process.stdout.write(`usage: wirestream-watch [--url ${url}] [--delta] ['${DEFAULT_QUERY}']\n`);
    process.exit(0);
  } else query = arg;
}

const client = createClient({ url, webSocketImpl: WebSocket, retryAttempts: 5, lazy: false });
process.stderr.write(`watching ${url}${delta ? ' (delta payloads)' : ''}\n  ${query}\n`);
// One reader per subscription: it keeps the previous payload, the base of the next delta.
const reader = createDeltaReader();
const unsubscribe = client.subscribe(
  delta ? { query, extensions: { delta: DELTA_FOSSIL } } : { query },
  {
    next: (result) => process.stdout.write(`${JSON.stringify(delta ? reader.read(result) : result)}\n`),
    error: (err: unknown) => {
      process.stderr.write(`subscription error: ${err instanceof Error ? err.message : JSON.stringify(err)}\n`);
      process.exit(1);
    },
    complete: () => process.exit(0),
  },
);
const stop = () => {
  unsubscribe();
  void client.dispose();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
