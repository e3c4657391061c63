import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'transform',
    include: ['src/**/*.test.ts'],
  },
});
