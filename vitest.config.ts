import { defineConfig } from 'vitest/config';

// One vitest process runs every workspace project so the test command prints one summary.
export default defineConfig({
  test: {
    projects: ['packages/*', 'apps/*', 'tests/*'],
  },
});
