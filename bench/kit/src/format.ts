/** How the benches write numbers in their tables and logs. */

/** 31234.5 → `31,235`; `n/a` for undefined, NaN or ±∞. A value that rounds to -0 prints as `0`. */
export function fmtInt(n: number | undefined): string {
  return n === undefined || !Number.isFinite(n) ? 'n/a' : (Math.round(n) || 0).toLocaleString('en-US');
}

/** A duration: `12.3 s`, `250 ms`, `42.1 ms`, `0.52 ms`; ∞ is an event that never arrived. */
export function fmtMs(ms: number): string {
  if (Number.isNaN(ms)) return 'n/a';
  if (!Number.isFinite(ms)) return '∞ (undelivered)';
  if (ms >= 10_000) return `${(ms / 1_000).toFixed(1)} s`;
  if (ms >= 100) return `${ms.toFixed(0)} ms`;
  if (ms >= 10) return `${ms.toFixed(1)} ms`;
  return `${ms.toFixed(2)} ms`;
}

/** `1.5 MB`, `2.25 KB`, `512 B` (binary units). */
export function fmtBytes(bytes: number | undefined): string {
  if (bytes === undefined || !Number.isFinite(bytes)) return 'n/a';
  const abs = Math.abs(bytes);
  if (abs >= 1_048_576) return `${(bytes / 1_048_576).toFixed(1)} MB`;
  if (abs >= 1_024) return `${(bytes / 1_024).toFixed(2)} KB`;
  return `${bytes.toFixed(0)} B`;
}

/** Bytes as MiB with one decimal, without the unit (table columns say it); `n/a` for a reading that is missing. */
export function fmtMb(bytes: number | undefined): string {
  return bytes === undefined ? 'n/a' : (bytes / 1_048_576).toFixed(1);
}
