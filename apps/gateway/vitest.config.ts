import { defineConfig } from 'vitest/config';

export default defineConfig({ test: { name: 'gateway', testTimeout: 30_000, hookTimeout: 60_000 } });
