// How ingest's tables write numbers: – for a figure a failed run does not have.
import { fmtInt } from '@wirestream/bench-kit';

/** 31234.5 → "31,235"; NaN → "–" (the kit's format with ingest's dash). */
export function int(n: number): string {
  return Number.isFinite(n) ? fmtInt(n) : '–';
}

export function fixed(n: number, digits = 1): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '–';
}
