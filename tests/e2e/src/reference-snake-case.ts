/**
 * An independent, deliberately simple statement of the key rule, so the e2e test does not
 * check the transform package against itself: word boundaries at lower/digit→Upper and at
 * the end of an acronym (URLValue → url_value), except an acronym's plural s
 * (imageURLs → image_urls), then lower case.
 */
export function referenceSnakeCase(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, (match, acronym: string, next: string, at: number, whole: string) => {
      const pluralS = next[1] === 's' && !/[a-z]/.test(whole.charAt(at + match.length));
      return pluralS ? match : `${acronym}_${next}`;
    })
    .toLowerCase();
}

export function referenceSnakeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(referenceSnakeKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [referenceSnakeCase(k), referenceSnakeKeys(v)]));
  }
  return value;
}
