import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'connect',
    include: ['src/**/*.test.ts'],
  },
});
