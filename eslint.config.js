// One flat config for every project. Each project's `lint` script runs `eslint .` in its own folder
// (Turborepo runs them, after `^build` so type-aware rules see the dependencies' dist/*.d.ts); ESLint
// finds this file by walking up, and every `files` glob below is relative to the repository root.
//
//   - typescript-eslint, type-aware (projectService: each file is checked with the tsconfig.json
//     of its project, so the same strict options as `typecheck`);
//   - @nx/enforce-module-boundaries: which project may depend on which, by the tags in each
//     package.json#nx (docs/decisions/0001-monorepo-pnpm-turborepo.md). Nx is used for its project
//     graph and this rule only: Turborepo runs the tasks;
//   - no-restricted-imports: no deep imports into a workspace package, and the gateway's layers.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// Nx without its daemon or cloud: the graph is built in this process from the workspace's files
// (package.json, pnpm-workspace.yaml, the imports in the sources). Set before Nx is loaded.
process.env.NX_DAEMON = 'false';
process.env.NX_NO_CLOUD = 'true';
const nx = (await import('@nx/eslint-plugin')).default;
const { createProjectGraphAsync, readCachedProjectGraph } = await import('nx/src/devkit-exports.js');

// The boundary rule reads the project graph from Nx's cache (.nx/workspace-data) and, when there is
// none (a clean clone, CI), skips itself with a warning and lets everything pass. So build the graph
// here, every run: it hashes the workspace's files (well under a second when nothing changed) and Nx
// holds a file lock, so parallel lint tasks build it once and the others read it.
await createProjectGraphAsync({ exitOnError: true });
readCachedProjectGraph(); // throws if the cache is still missing, rather than linting without the rule

// import-x's TypeScript settings without its legacy resolver setting (`resolver-next` below replaces it).
const { 'import-x/resolver': _legacyResolver, ...importXTypeScript } = importX.flatConfigs.typescript.settings ?? {};

/** @typedef {{ regex: string, message: string }} Pattern */
/** @typedef {{ name: string, message: string }} Path */

/** @type {Pattern} */
const noDeepImports = {
  // `@wirestream/schema/auction.graphql` and `@wirestream/gateway/internals` are declared exports
  // (package.json#exports), not deep imports; the second is for benches only (below).
  regex: '^@wirestream/(?!gateway/internals$)[^/]+/(?!auction\\.graphql$)',
  message:
    'Import a workspace package through its public entry (`@wirestream/<name>`), never a file inside it: what is not exported from its src/index.ts is private. If you need it, export it on purpose.',
};

/** @type {Path} */
const gatewayInternals = {
  name: '@wirestream/gateway/internals',
  message: "The gateway's core without a server is for in-process benches (bench/*) only: use `@wirestream/gateway`, or the app as a process.",
};

/**
 * `no-restricted-imports` options. Flat config does not merge a rule's options across blocks (the
 * last block wins), so every block that sets the rule starts from the same base.
 * @param {{ paths?: Path[], patterns?: Pattern[] }} [extra]
 */
function restrictedImports({ paths = [], patterns = [] } = {}) {
  return ['error', { paths: [gatewayInternals, ...paths], patterns: [noDeepImports, ...patterns] }];
}

// The gateway's layers (STYLE.md habit 13): matched on the import specifier, so they hold from the
// first file in a folder, whatever its depth. A relative specifier with a `transport` segment in it
// reaches transport/ (`../transport/x.js`, `../../transport/x.js`).
const gateway = 'apps/gateway/src';
/** @param {string} folder */
const relativeInto = (folder) => `^\\.{1,2}/(?:.*/)?${folder}(?:/|$)`;
const coreKnowsNoLibraries = 'the core knows neither uWS nor Redis: put it in transport/ or broker/ and pass the core what it needs.';

/** The Nx rule: which projects a project may import, by its package.json#nx tags. */
const moduleBoundaries = [
  'error',
  {
    // Relative imports that leave a project are reported whatever the tags (the rule resolves them).
    depConstraints: [
      // Apps never import each other; they share code through packages.
      { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:package'] },
      // Dependencies point one way: packages never import apps (or tests, or benches).
      { sourceTag: 'type:package', onlyDependOnLibsWithTags: ['type:package'] },
      // Tests drive the apps like a user does.
      { sourceTag: 'type:test', onlyDependOnLibsWithTags: ['type:app', 'type:package'] },
      // Benches too; and bench/loadgen is the load client that the other benches share.
      { sourceTag: 'type:bench', onlyDependOnLibsWithTags: ['type:app', 'type:package', 'type:bench'] },
    ],
  },
];

export default defineConfig(
  globalIgnores([
    '**/dist/',
    '**/bench-dist/', // packages/transform's compiled bench
    // AssemblyScript (u8, usize, load/store): compiled by asc, checked by it, not TypeScript to tsc.
    'packages/transform/assembly/',
    'apps/gateway/assembly/',
    '**/coverage/',
    '.wirestream/',
    '.nx/',
    '.turbo/',
    'infra/kafka/lib/',
    'infra/kafka/target/',
    'bench/results/', // data only
  ]),

  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },

  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,

  {
    files: ['**/*.{ts,tsx,mts,cts}'],
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // Stricter than recommended where it is cheap (few findings, each a real one):
      // a switch over a union names every member (STYLE.md habit 11), or says `default` on purpose;
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // no calls to what a library has deprecated;
      '@typescript-eslint/no-deprecated': 'error',
      // `return promise` inside try/catch/finally must be `return await promise`, or the catch misses it;
      '@typescript-eslint/return-await': ['error', 'error-handling-correctness-only'],
      // a rejection is `unknown`, like a caught error (tsconfig's useUnknownInCatchVariables).
      '@typescript-eslint/use-unknown-in-catch-callback-variable': 'error',
    },
  },

  {
    rules: {
      // Down from the default only for names that say so: `_` marks a binding unused on purpose
      // (`for (const _ in object) count++`, `(_root, args) => …`).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
    },
  },

  {
    // Functions a reader can walk (STYLE.md habit 14): none over ~150 lines in the apps' and packages'
    // sources. Tests (a describe block is one long callback) and benches are not held to it.
    files: ['apps/*/src/**/*.{ts,tsx}', 'packages/*/src/**/*.{ts,tsx}'],
    ignores: ['**/*.test.{ts,tsx}'],
    rules: { 'max-lines-per-function': ['error', { max: 150, skipBlankLines: true, skipComments: true }] },
  },
  {
    // The one exception: the JSON byte rewriter is one state machine over the bytes of a message, ingest's
    // hottest loop; its states share locals that a split would turn into property loads or closures.
    files: ['packages/transform/src/json-bytes-rewriter.ts'],
    rules: { 'max-lines-per-function': 'off' },
  },

  {
    plugins: { '@nx': nx },
    rules: {
      '@nx/enforce-module-boundaries': moduleBoundaries,
      'no-restricted-imports': restrictedImports(),
    },
  },

  {
    // Benches may reach the gateway's core in process (`@wirestream/gateway/internals`).
    files: ['bench/**/*.{ts,tsx,mts,cts,js,mjs}'],
    rules: { 'no-restricted-imports': ['error', { patterns: [noDeepImports] }] },
  },

  {
    // Modules do not import each other in a circle (STYLE.md habit 14), in any app or package.
    // import-x follows value imports only (`import type` is skipped by the rule, whatever its
    // options); type-only circles are caught by dependency-cruiser (.dependency-cruiser.cjs).
    files: ['apps/*/src/**/*.{ts,tsx}', 'packages/*/src/**/*.{ts,tsx}'],
    plugins: { 'import-x': importX },
    settings: {
      // import-x's TypeScript settings (which files it parses, with which parser), and the resolver
      // that maps `./x.js` to x.ts by each project's tsconfig.json.
      ...importXTypeScript,
      'import-x/resolver-next': [
        createTypeScriptImportResolver({
          project: [`${import.meta.dirname}/apps/*/tsconfig.json`, `${import.meta.dirname}/packages/*/tsconfig.json`],
          noWarnOnMultipleProjects: true,
        }),
      ],
    },
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },

  {
    // The console is React: the rules of hooks (and the React Compiler's checks in `recommended`).
    files: ['apps/console/**/*.{ts,tsx}'],
    extends: [reactHooks.configs.flat.recommended],
  },

  {
    // Plain JavaScript (scripts, configs): Node globals, no type information.
    files: ['**/*.{js,mjs,cjs}'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: globals.node },
  },

  {
    // Tool configs sit outside the projects' tsconfig.json (nothing to typecheck in three lines):
    // lint them without type information rather than widening every tsconfig.
    files: ['**/vitest.config.ts', '**/vite.config.ts'],
    extends: [tseslint.configs.disableTypeChecked],
  },

  // --- The wire contract ------------------------------------------------------------------------
  // What ingest writes to Redis and the gateway reads needs no GraphQL: SDL compilation is
  // @wirestream/schema's, which depends on @wirestream/wire, never the other way round.
  {
    files: ['packages/wire/**/*.ts'],
    rules: {
      'no-restricted-imports': restrictedImports({
        paths: [
          { name: 'graphql', message: 'packages/wire is the Redis wire contract and needs no GraphQL: put SDL-side code in packages/schema.' },
          { name: '@wirestream/schema', message: 'packages/wire is below packages/schema (schema depends on wire): move what you need here, or the code there.' },
        ],
        patterns: [{ regex: '^graphql/', message: 'packages/wire needs no GraphQL: put SDL-side code in packages/schema.' }],
      }),
    },
  },

  // --- The gateway's layers -------------------------------------------------------------------
  {
    files: [`${gateway}/core/**`],
    rules: {
      'no-restricted-imports': restrictedImports({
        paths: [
          { name: 'uWebSockets.js', message: `Layer rule (core): ${coreKnowsNoLibraries}` },
          { name: 'ioredis', message: `Layer rule (core): ${coreKnowsNoLibraries}` },
        ],
        patterns: [
          {
            regex: relativeInto('transport'),
            message:
              'Layer rule (core): core/ must not import transport/. The core is transport-agnostic; the uWS adapter calls into it, not the other way round.',
          },
          {
            regex: `^\\.{1,2}/(?:.*/)?broker(?:/(?!broker\\.js$)|$)`,
            message:
              'Layer rule (core): from broker/ the core may import only broker/broker.ts (the Broker interface). Implementations are built in main.ts and passed in.',
          },
        ],
      }),
    },
  },
  {
    files: [`${gateway}/broker/**`],
    rules: {
      'no-restricted-imports': restrictedImports({
        patterns: [
          {
            regex: relativeInto('transport'),
            message:
              'Layer rule (broker): broker/ must not import transport/. Broker and transport are two adapters around the core; they meet only in main.ts.',
          },
        ],
      }),
    },
  },
  {
    files: [`${gateway}/transport/**`],
    rules: {
      'no-restricted-imports': restrictedImports({
        patterns: [
          {
            regex: relativeInto('broker'),
            message:
              'Layer rule (transport): transport/ must not import broker/. Broker and transport are two adapters around the core; they meet only in main.ts.',
          },
        ],
      }),
    },
  },
  {
    files: [`${gateway}/auth/**`],
    rules: {
      'no-restricted-imports': restrictedImports({
        patterns: [
          {
            regex: relativeInto('(?:core|broker|transport)'),
            message:
              'Layer rule (auth): auth/ must not import core/, broker/ or transport/. It only verifies credentials; the layers call it.',
          },
        ],
      }),
    },
  },
);
