#!/usr/bin/env node
// Watch a subscription from the terminal: one JSON line per event, with its Kafka position.
//   node apps/demo/dist/watch.js [--url ws://127.0.0.1:4000/graphql] ['subscription { ... }']
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

const DEFAULT_QUERY = 'subscription { bidPlaced { listing_id bid_id bidder_id amount { amount_cents currency_code } placed_at } }';

const args = process.argv.slice(2);
let url = process.env['WIRESTREAM_URL'] ?? 'ws://127.0.0.1:4000/graphql';
let query = DEFAULT_QUERY;
for (let i = 0; i < args.length; i++) {
  const arg = args[i] as string;
  if (arg === '--url') url = args[++i] ?? url;
  else if (arg === '--help' || arg === '-h') {
    process.stdout.write(`usage: wirestream-watch [--url ${url}] ['${DEFAULT_QUERY}']\n`);
    process.exit(0);
  } else query = arg;
}

const client = createClient({ url, webSocketImpl: WebSocket, retryAttempts: 5, lazy: false });
process.stderr.write(`watching ${url}\n  ${query}\n`);
const unsubscribe = client.subscribe(
  { query },
  {
    next: (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
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
