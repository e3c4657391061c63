// Loaded with `node --import` into a measured process, before its main script. Lets the bench try
// settings the app does not expose yet, without editing the app, and makes profiles readable.
//
// BENCH_KAFKAJS_CONSUMER='{"maxBytesPerPartition":4194304}' merges these options into every
//   kafka.consumer(config) call of the process (the options win over the app's).
// BENCH_WRAP_JSON=1 routes JSON.parse/JSON.stringify through named JS functions: V8's CPU profile
//   charges builtins to their caller, so without this they hide inside the caller's self time.
import { createRequire } from 'node:module';

const consumerOptionsJson = process.env['BENCH_KAFKAJS_CONSUMER'];
if (consumerOptionsJson !== undefined && consumerOptionsJson !== '') {
  const main = process.argv[1];
  if (main === undefined) throw new Error('child-hooks: no main script in process.argv[1]');
  const overrides = JSON.parse(consumerOptionsJson) as Record<string, unknown>;
  // Resolve kafkajs the way the main script does, so this patches the very class it uses.
  const kafkajs = createRequire(main)('kafkajs') as { Kafka: { prototype: { consumer: (config: object) => unknown } } };
  const original = kafkajs.Kafka.prototype.consumer;
  kafkajs.Kafka.prototype.consumer = function consumer(this: unknown, config: object) {
    return original.call(this, { ...config, ...overrides });
  };
}

if (process.env['BENCH_WRAP_JSON'] === '1') {
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  JSON.parse = function jsonParse(text: string, reviver?: (this: unknown, key: string, value: unknown) => unknown) {
    return parse(text, reviver) as unknown;
  };
  JSON.stringify = function jsonStringify(value: unknown, replacer?: unknown, space?: string | number) {
    return stringify(value, replacer as never, space);
  } as typeof JSON.stringify;
}
