/** One problem found while loading configuration. */
export interface ConfigIssue {
  /** The environment variable (or, for a config file problem, the file path). */
  readonly variable: string;
  /** The spec property the variable feeds, or `undefined` for file-level problems. */
  readonly key: string | undefined;
  /** Where the offending value came from. */
  readonly source: 'env' | 'file';
  /** What is wrong and what was expected, e.g. `required but not set; expected a port number`. */
  readonly problem: string;
  /** The value received, quoted and truncated; `****` for secrets; `undefined` when not set. */
  readonly received: string | undefined;
}

/**
 * Every configuration problem of a service, reported at once so an operator fixes them in one
 * round trip instead of one restart per variable. Never retriable: the input must change.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  /** A restart with the same environment fails the same way. */
  readonly retriable = false;
  readonly issues: readonly ConfigIssue[];

  constructor(issues: readonly ConfigIssue[]) {
    super(formatIssues(issues));
    this.issues = Object.freeze([...issues]);
  }
}

function formatIssues(issues: readonly ConfigIssue[]): string {
  const lines = issues.map((issue) => {
    const where = issue.source === 'file' && issue.key !== undefined ? ' (from config file)' : '';
    const received = issue.received === undefined ? '' : `; received ${issue.received}`;
    return `  - ${issue.variable}${where}: ${issue.problem}${received}`;
  });
  const count = issues.length === 1 ? '1 problem' : `${issues.length} problems`;
  return `Invalid configuration (${count}):\n${lines.join('\n')}\nFix these variables (environment or config file) and start again.`;
}
