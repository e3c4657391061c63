/** What a subscription asks to be replayed from: a time, as the client wrote it and in ms since the epoch. */
export interface SinceRequest {
  readonly ms: number;
  readonly text: string;
}

/** RFC 3339 date-time (section 5.6): a full date, `T` (or a space, or `t`), a full time with an offset. */
const RFC3339 = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt ]([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d{1,9})?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$/;
const MAX_LENGTH = 40;

/**
 * Validates `extensions.since` of a subscribe payload (external input): an RFC 3339 time
 * (`"2026-12-04T09:00:00Z"`, `"2026-12-04T10:00:00.5+01:00"`) from which history is replayed.
 * It cannot go with `extensions.snapshot` (a snapshot is the current state, since a stretch of the
 * past). Returns undefined when absent, an error message naming the field when malformed.
 */
export function parseSinceRequest(extensions: unknown): SinceRequest | undefined | string {
  if (extensions === null || typeof extensions !== 'object') return undefined;
  const { since, snapshot } = extensions as Record<string, unknown>;
  if (since === undefined || since === null) return undefined;
  if (typeof since !== 'string' || since.length > MAX_LENGTH || !RFC3339.test(since)) {
    const got = typeof since === 'string' ? JSON.stringify(since.slice(0, MAX_LENGTH)) : typeof since;
    return `extensions.since (on SSE also the since query parameter) must be an RFC 3339 time such as "2026-12-04T09:00:00Z" (date, T, time, Z or an offset like +01:00), got ${got}`;
  }
  const ms = Date.parse(since.replace(' ', 'T'));
  if (!Number.isFinite(ms) || !dayExists(since)) return `extensions.since is not a time that exists: ${JSON.stringify(since)}`;
  if (snapshot !== undefined && snapshot !== null && snapshot !== false) {
    return 'extensions.since cannot be combined with extensions.snapshot: a snapshot is the current value of each key, since replays the events from a time; ask for one of them';
  }
  return { ms, text: since };
}

/** Whether the date's day is in its month (Date.parse takes 2026-02-31 for 2026-03-03). */
function dayExists(text: string): boolean {
  const year = Number(text.slice(0, 4));
  const month = Number(text.slice(5, 7));
  const day = Number(text.slice(8, 10));
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}
