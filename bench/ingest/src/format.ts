// How ingest's tables write numbers: – for a figure a failed run does not have.
/** 31234.5 → "31,235"; NaN → "–". */
export function int(n: number): string {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–';
}

export function fixed(n: number, digits = 1): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '–';
}
