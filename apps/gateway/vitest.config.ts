import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'gateway',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // graphql 16 has no `exports`: Node would load its CommonJS build for graphql-tools (a plugin's
    // resolvers, @wirestream/plugin) while Vite gives the code under test its ES build: two realms.
    server: { deps: { inline: [/@graphql-tools\//] } },
  },
});
