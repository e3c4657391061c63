import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'telemetry',
    include: ['src/**/*.test.ts'],
  },
});
