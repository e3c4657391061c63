// Import circles, type-only ones included (STYLE.md habit 14). ESLint's import-x/no-cycle holds the
// value imports in every editor; it skips `import type` by design, so this check (run by the test
// command, scripts/test.sh) holds the whole graph: a type circle is still two modules that cannot be
// read, moved or tested one without the other. No circle is waived (there is no baseline of known
// circles since issue #31 removed the last ones): a new one fails the run.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Modules import each other in a circle: move the shared type or function to the module that owns it, and have the others import it from there.',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules|coverage)/' },
    // Type-only imports count: they are edges of the graph a reader walks.
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js', '.mjs'] },
  },
};
