/** Markdown tables, as the result files hold them. */

/** A markdown table; the first row is the header. */
export function markdownTable(rows: readonly (readonly string[])[]): string {
  const [header, ...body] = rows;
  if (!header) return '';
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...body.map(line)].join('\n');
}

/** A markdown table with its columns padded for the terminal: the first left-aligned, the others right-aligned (`---:`). */
export function paddedTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(' | ')} |`;
  const rule = `| ${widths.map((w, i) => (i === 0 ? '-'.repeat(w) : `${'-'.repeat(Math.max(1, w - 1))}:`)).join(' | ')} |`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}
