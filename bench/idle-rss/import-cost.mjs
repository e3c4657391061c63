// Import cost of modules, each in a fresh process (bench/results/README.md names this command): the
// bench is src/import-cost.ts, built to dist/import-cost.js (turbo run build), which this runs.
await import('./dist/import-cost.js');
