#!/usr/bin/env node
// `wirestream-schema from-registry …`: SDL from a registry subject (decision 0019). The logic is schema-cli.ts.
import { runSchemaCli } from '../schema-cli.js';

process.exitCode = await runSchemaCli(process.argv.slice(2), {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
