// Prints the closing summary of the test command from vitest's JSON report, and sets the exit code.
// The last line is the plain form CI tools read: "tests: N passed, N failed, N skipped".
import { readFileSync, existsSync } from 'node:fs';
import { relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;

// Arguments: the report, vitest's exit status, the seconds taken, then any checks that ran beside
// the tests as NAME=STATUS (typecheck+lint=0): a failed check counts as one failure.
const [file, statusArg, secondsArg, ...checkArgs] = process.argv.slice(2);
const checks = checkArgs.map((arg) => {
  const at = arg.lastIndexOf('=');
  return { name: arg.slice(0, at), status: Number(arg.slice(at + 1)) };
});
const status = Number(statusArg ?? 1);
let report;
if (file && existsSync(file)) report = JSON.parse(readFileSync(file, 'utf8'));

if (!report) {
  console.error(`\nno test report at ${file}: vitest exited with ${status} before reporting`);
  console.log('tests: 0 passed, 1 failed');
  process.exit(1);
}

const passed = report.numPassedTests ?? 0;
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
// A failed test counts once. vitest's numFailedTestSuites also counts the file and every describe
// around a failed test, so only a file that failed with no failed test (it did not load, or a hook
// threw) is added to it, as one failure.
let failed = report.numFailedTests ?? 0;
const byProject = new Map();
for (const suite of report.testResults ?? []) {
  // The project is the first two segments of the path from the repo root (apps/gateway, tests/e2e), at any depth.
  const project = relative(root, suite.name).split('/').slice(0, 2).join('/') || 'root';
  const entry = byProject.get(project) ?? { passed: 0, failed: 0 };
  let failedHere = 0;
  for (const t of suite.assertionResults ?? []) {
    if (t.status === 'passed') entry.passed++;
    else if (t.status === 'failed') failedHere++;
  }
  if (suite.status === 'failed' && failedHere === 0) {
    failedHere = 1;
    failed++;
  }
  entry.failed += failedHere;
  byProject.set(project, entry);
}

console.log('\n──────── Wirestream test summary ────────');
for (const check of checks) {
  console.log(`  ${check.status === 0 ? '✓' : '✗'} ${check.name.padEnd(22)} ${check.status === 0 ? 'ok' : `failed (exit ${check.status})`}`);
  if (check.status !== 0) failed++;
}
for (const [project, { passed: p, failed: f }] of [...byProject].sort()) {
  console.log(`  ${f > 0 ? '✗' : '✓'} ${project.padEnd(22)} ${String(p).padStart(4)} passed${f > 0 ? `, ${f} failed` : ''}`);
}
const ok = status === 0 && failed === 0 && (passed > 0 || report.testResults?.length === 0);
console.log(`  ${ok ? 'PASS' : 'FAIL'} in ${secondsArg ?? '?'} s`);
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(ok ? 0 : 1);
