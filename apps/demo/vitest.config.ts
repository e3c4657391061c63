import { defineConfig } from 'vitest/config';

// sellers.test.ts starts the subgraph as its own process inside tests: under a loaded test run
// that alone can take longer than vitest's 5 s default.
export default defineConfig({ test: { name: 'demo', testTimeout: 30_000, hookTimeout: 30_000 } });
