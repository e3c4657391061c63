import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'demo-events',
    include: ['src/**/*.test.ts'],
  },
});
