import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'delta',
    include: ['src/**/*.test.ts'],
  },
});
