import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'registry',
    include: ['src/**/*.test.ts'],
  },
});
