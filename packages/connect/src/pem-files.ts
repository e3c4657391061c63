import { readFile } from 'node:fs/promises';
import type { ConfigIssue } from '@wirestream/config';

/** [setting, config key, path] of one PEM file to read at start. */
export type PemFileSetting = readonly [variable: string, key: string, path: string | undefined];

/**
 * Reads the given PEM files (certificates, keys) once, at start. A file that cannot be read or does
 * not hold PEM becomes a problem naming its setting; the content is never shown.
 */
export async function readPemFiles(files: readonly PemFileSetting[], issues: ConfigIssue[]): Promise<Map<string, string>> {
  const read = new Map<string, string>();
  await Promise.all(
    files.map(async ([variable, key, path]) => {
      if (path === undefined) return;
      const issue = (problem: string): void => void issues.push({ variable, key, source: 'env', problem, received: JSON.stringify(path) });
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (err) {
        issue(`could not read the file: ${(err as Error).message}`);
        return;
      }
      if (!text.includes('-----BEGIN ')) {
        issue('is not a PEM file (no "-----BEGIN" line): give the certificate or key in PEM form');
        return;
      }
      read.set(variable, text);
    }),
  );
  return read;
}
