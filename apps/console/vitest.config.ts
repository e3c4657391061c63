import { defineConfig } from 'vitest/config';

// Unit tests of the console's pure logic (examples, Prometheus parsing, rates); the browser test
// against real Kafka, Redis, ingest and gateway is tests/console.
export default defineConfig({ test: { name: 'console-app', environment: 'node', include: ['src/**/*.test.ts'] } });
