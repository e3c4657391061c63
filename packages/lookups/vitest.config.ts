import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'lookups',
    include: ['src/**/*.test.ts'],
  },
});
