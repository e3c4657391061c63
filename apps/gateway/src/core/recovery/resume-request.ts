/** What a client sends to resume: the epoch it saw and, per partition, the last offset it received. */
export interface ResumeRequest {
  readonly epoch: string;
  readonly positions: ReadonlyMap<number, string>;
  /**
   * The gateway's own resume (a subscription held while a plugin decided, session.ts): the client
   * asked none, so a complete recovery is not signalled (a gap still is). @default false
   */
  readonly quiet?: boolean;
}

const MAX_RESUME_PARTITIONS = 4_096;
const OFFSET = /^(0|[1-9][0-9]{0,18})$/;

/**
 * Validates `extensions.resume` of a subscribe payload (external input):
 * `{ "epoch": "<epoch>", "positions": { "<partition>": "<offset>", … } }`.
 * Returns undefined when absent, an error message when malformed.
 */
export function parseResumeRequest(extensions: unknown): ResumeRequest | undefined | string {
  if (extensions === null || typeof extensions !== 'object') return undefined;
  const resume = (extensions as Record<string, unknown>)['resume'];
  if (resume === undefined || resume === null) return undefined;
  if (typeof resume !== 'object') return 'extensions.resume must be an object { epoch, positions }';
  const { epoch, positions } = resume as Record<string, unknown>;
  if (typeof epoch !== 'string' || epoch.length === 0 || epoch.length > 128) return 'extensions.resume.epoch must be the epoch string from extensions.position';
  if (positions === null || typeof positions !== 'object' || Array.isArray(positions)) {
    return 'extensions.resume.positions must be an object { "<partition>": "<last offset received>" }';
  }
  const entries = Object.entries(positions as Record<string, unknown>);
  if (entries.length > MAX_RESUME_PARTITIONS) return `extensions.resume.positions has more than ${MAX_RESUME_PARTITIONS} partitions`;
  const parsed = new Map<number, string>();
  for (const [partition, offset] of entries) {
    const p = Number(partition);
    if (!Number.isInteger(p) || p < 0 || String(p) !== partition) return `extensions.resume.positions: "${partition.slice(0, 20)}" is not a partition number`;
    if (typeof offset !== 'string' || !OFFSET.test(offset)) return `extensions.resume.positions["${partition}"] must be an offset as a decimal string`;
    parsed.set(p, offset);
  }
  return { epoch, positions: parsed };
}

/**
 * Validates `extensions.start` of a subscribe payload (external input): `true` asks for the
 * subscription's starting point (start.ts) as its first `next`. Returns false when absent, an error
 * message otherwise.
 */
export function parseStartRequest(extensions: unknown): boolean | string {
  if (extensions === null || typeof extensions !== 'object') return false;
  const start = (extensions as Record<string, unknown>)['start'];
  if (start === undefined || start === null || start === false) return false;
  if (start === true) return true;
  return `extensions.start must be true (to receive the subscription's starting point) or absent, got ${JSON.stringify(start)?.slice(0, 40) ?? typeof start}`;
}
