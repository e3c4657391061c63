// Idle RSS of two worktrees' built gateway and ingest (bench/results/idle-rss.md names this
// command): the bench is src/idle-rss.ts, built to dist/idle-rss.js (turbo run build), which this runs.
await import('./dist/idle-rss.js');
