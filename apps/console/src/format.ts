/** Number formatting shared by the views: short, fixed units, `–` for no data. */
export const NO_DATA = '–';

export function formatCount(value: number | undefined): string {
  return value === undefined ? NO_DATA : Math.round(value).toLocaleString('en-US');
}

export function formatRate(perSecond: number | undefined): string {
  if (perSecond === undefined) return NO_DATA;
  return `${perSecond < 10 ? perSecond.toFixed(1) : Math.round(perSecond).toLocaleString('en-US')}/s`;
}

export function formatMs(ms: number | undefined): string {
  if (ms === undefined) return NO_DATA;
  return ms < 10 ? `${ms.toFixed(2)} ms` : `${Math.round(ms).toLocaleString('en-US')} ms`;
}

export function formatMiB(bytes: number | undefined): string {
  return bytes === undefined ? NO_DATA : `${(bytes / 1_048_576).toFixed(1)} MiB`;
}

/** `12:03:04.567`, local time. */
export function formatClock(atMs: number): string {
  const d = new Date(atMs);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, '0')}`;
}

/** Any thrown or reported value as one line of text (graphql-ws reports errors, arrays, close events). */
export function describeError(error: unknown): string {
  if (Array.isArray(error)) return error.map(describeError).join('; ');
  if (error instanceof Error) return error.message;
  if (typeof error === 'object' && error !== null) {
    const { code, reason, message } = error as { code?: unknown; reason?: unknown; message?: unknown };
    if (typeof message === 'string') return message;
    if (typeof code === 'number') return `socket closed: ${code}${typeof reason === 'string' && reason !== '' ? ` ${reason}` : ''}`;
  }
  return String(error);
}
