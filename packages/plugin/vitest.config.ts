import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'plugin',
    include: ['src/**/*.test.ts'],
    // graphql 16 has no `exports`: Node loads its CommonJS build for graphql-tools while Vite gives
    // the tests its ES build, two realms ("Cannot use GraphQLObjectType from another module").
    // Inlined, graphql-tools imports the same graphql as the code under test, as in production.
    server: { deps: { inline: [/@graphql-tools\//] } },
  },
});
