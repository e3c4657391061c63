import type { ConfigSpec } from './env-var.js';

/**
 * Renders a spec as a Markdown table (`Variable | Default | Description`) so a README documents
 * exactly what the code reads; a test can compare the README against it.
 *
 * Required variables show *required*, optional ones *optional*; secret defaults are masked.
 */
export function renderConfigTable(spec: ConfigSpec): string {
  const rows = Object.values(spec).map((variable) => {
    const fallback =
      variable.presence === 'required'
        ? '*required*'
        : variable.presence === 'optional'
          ? '*optional*'
          : variable.secret
            ? '`****`'
            : code(formatDefault(variable.default));
    const description = variable.secret ? `${variable.description} (secret; or a file holding it: \`${variable.name}_FILE\`)` : variable.description;
    return `| \`${variable.name}\` | ${fallback} | ${escapeCell(description)} |`;
  });
  return ['| Variable | Default | Description |', '| --- | --- | --- |', ...rows].join('\n');
}

// Defaults are shown the way an operator would write them in the environment.
function formatDefault(value: unknown): string {
  if (Array.isArray(value)) return value.map(formatDefault).join(',');
  if (typeof value === 'string') return value === '' ? '""' : value;
  if (typeof value === 'object' && value !== null) return JSON.stringify(value);
  return String(value);
}

function code(text: string): string {
  return `\`${escapeCell(text)}\``;
}

function escapeCell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}
