import { readRepoFile } from './repo.js';

/** One row of a configuration table of docs/configuration.md. */
export interface ConfigVariable {
  readonly name: string;
  /** The default as written in the table (without backticks); undefined when the table says optional or required. */
  readonly defaultValue: string | undefined;
  readonly required: boolean;
}

/** The configuration tables of docs/configuration.md, one per app: `ingest`, `gateway`, `demo-producer`. */
export type ConfigApp = 'ingest' | 'gateway' | 'demo-producer';

/** The generated page that holds the tables (scripts/render-config-docs.mjs). */
export const CONFIGURATION_PAGE = 'docs/configuration.md';

/**
 * Reads the table between `<!-- config:<app> -->` markers of docs/configuration.md. The tables are generated
 * from the apps' config definitions and checked by the test command
 * (`scripts/render-config-docs.mjs --check`), so they are the list of variables an app reads.
 */
export function readConfigTable(app: ConfigApp): ReadonlyMap<string, ConfigVariable> {
  const readme = readRepoFile(CONFIGURATION_PAGE);
  const start = readme.indexOf(`<!-- config:${app} -->`);
  const end = readme.indexOf(`<!-- /config:${app} -->`);
  if (start < 0 || end < start) throw new Error(`${CONFIGURATION_PAGE} has no <!-- config:${app} --> table`);
  const rows = new Map<string, ConfigVariable>();
  for (const line of readme.slice(start, end).split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    // | `NAME` | default | description |  → ['', '`NAME`', 'default', 'description', '']
    const name = /^`([A-Z][A-Z0-9_]*)`$/.exec(cells[1] ?? '')?.[1];
    if (name === undefined) continue;
    const rawDefault = cells[2] ?? '';
    const quoted = /^`(.*)`$/.exec(rawDefault)?.[1];
    rows.set(name, { name, defaultValue: quoted, required: rawDefault === '*required*' });
  }
  if (rows.size === 0) throw new Error(`${CONFIGURATION_PAGE}'s config:${app} table has no rows`);
  return rows;
}
