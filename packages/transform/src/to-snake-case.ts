/**
 * The snake_case rule, unmemoized. See the package README for the rules and why they differ from
 * lodash `snakeCase`.
 *
 * A key is converted only when it is an identifier: letters (any script), combining marks, digits
 * and `_`. Anything else (`lst-000042`, `content-type`, `$ref`, `a.b`, an e-mail address) is data,
 * typically a map key, and is returned verbatim: renaming it would corrupt the payload.
 *
 * Word boundaries (an `_` is inserted before the character):
 * - an upper-case letter after a lower-case letter or a digit: `listingId` → `listing_id`,
 *   `address2Line` → `address2_line`;
 * - the last upper-case letter of an acronym followed by a lower-case letter: `URLValue` → `url_value`,
 *   except an acronym's plural `s`: `imageURLs` → `image_urls`, `IDsByType` → `ids_by_type`.
 * Digits stay with the word before them (`streetLine1` → `street_line1`), existing underscores are
 * kept as they are (`_id`, `__typename`, `foo__bar`, `value_`), and everything is lower-cased.
 * The rule is idempotent: a key without upper-case letters is returned as is.
 */
export function toSnakeCase(key: string): string {
  const length = key.length;
  // Deliberately imperative: this scan decides, without allocating, that most keys need no work.
  let first = 0;
  for (; first < length; first++) {
    const c = key.charCodeAt(first);
    if (c >= 97 /* a */ && c <= 122 /* z */) continue;
    if (c >= 65 /* A */ && c <= 90 /* Z */) break;
    if ((c >= 48 /* 0 */ && c <= 57 /* 9 */) || c === 95 /* _ */) continue;
    return c >= 128 ? convertUnicode(key) : key;
  }
  if (first === length) return key;
  for (let i = first + 1; i < length; i++) {
    const c = key.charCodeAt(i);
    if (c >= 128) return convertUnicode(key);
    if (!isAsciiWordChar(c)) return key;
  }
  return convertAscii(key, first);
}

const LOWER = 1;
const UPPER = 2;
const DIGIT = 3;
const UNDERSCORE = 4;

function isAsciiWordChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95;
}

/** Class of the ASCII character code `c` (NaN past the end of a string gives 0). */
function asciiClass(c: number): number {
  if (c >= 97 && c <= 122) return LOWER;
  if (c >= 65 && c <= 90) return UPPER;
  if (c >= 48 && c <= 57) return DIGIT;
  return c === 95 ? UNDERSCORE : 0;
}

/**
 * Whether an `_` goes before a character of class UPPER, given the classes around it
 * (0 past either end) and whether the next character is an `s`.
 */
function boundaryBefore(previous: number, next: number, nextIsS: boolean, afterNext: number): boolean {
  if (previous === LOWER || previous === DIGIT) return true;
  if (previous !== UPPER || next !== LOWER) return false;
  // `URLValue`: the V starts a word. `imageURLs`: a lone trailing `s` is the acronym's plural.
  return !(nextIsS && afterNext !== LOWER);
}

// `_a`…`_z` and `a`…`z` by upper-case character code, so the loop below appends one string per letter.
const LOWERED: string[] = [];
const LOWERED_WITH_BOUNDARY: string[] = [];
for (let c = 65; c <= 90; c++) {
  LOWERED[c] = String.fromCharCode(c + 32);
  LOWERED_WITH_BOUNDARY[c] = `_${String.fromCharCode(c + 32)}`;
}

/** `key` is ASCII word characters only and has an upper-case letter at `first`. */
function convertAscii(key: string, first: number): string {
  const length = key.length;
  let out = '';
  let copyFrom = 0; // characters before this index are in `out`
  // Deliberately imperative: appends runs of unchanged characters as slices, not one by one.
  for (let i = first; i < length; i++) {
    const c = key.charCodeAt(i);
    if (c < 65 || c > 90) continue;
    if (i > copyFrom) out += key.slice(copyFrom, i);
    const boundary =
      i > 0 &&
      boundaryBefore(asciiClass(key.charCodeAt(i - 1)), asciiClass(key.charCodeAt(i + 1)), key.charCodeAt(i + 1) === 115 /* s */, asciiClass(key.charCodeAt(i + 2)));
    out += (boundary ? LOWERED_WITH_BOUNDARY[c] : LOWERED[c]) as string;
    copyFrom = i + 1;
  }
  return copyFrom < length ? out + key.slice(copyFrom) : out;
}

// Identifier characters beyond ASCII: letters, combining marks, numbers (plus `_`).
const UNICODE_IDENTIFIER = /^[\p{L}\p{M}\p{N}_]+$/u;
const UNICODE_DIGIT = /^\p{Nd}$/u;

function convertUnicode(key: string): string {
  if (!UNICODE_IDENTIFIER.test(key)) return key;
  // Code points, not UTF-16 units: astral letters (e.g. Deseret, mathematical) have case too.
  const chars = Array.from(key);
  const classes = chars.map((ch) => {
    if (ch === '_') return UNDERSCORE;
    // "Upper" means "has a different lower-case form": that keeps the rule idempotent, because a
    // lower-cased character never has one.
    if (ch.toLowerCase() !== ch) return UPPER;
    return UNICODE_DIGIT.test(ch) ? DIGIT : LOWER;
  });
  let out = '';
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i] as string;
    if (classes[i] === UPPER) {
      if (i > 0 && boundaryBefore(classes[i - 1] ?? 0, classes[i + 1] ?? 0, chars[i + 1] === 's', classes[i + 2] ?? 0)) out += '_';
      out += ch.toLowerCase();
    } else {
      out += ch;
    }
  }
  return out;
}
