import fc from 'fast-check';

/** JSON text of `values` with one edit: `insert` put at a random place, up to 3 characters removed there. */
export function mutatedJson(values: fc.Arbitrary<unknown>, inserts: readonly string[]): fc.Arbitrary<string> {
  return fc.tuple(values, fc.nat(), fc.constantFrom(...inserts), fc.nat(3)).map(([v, at, insert, remove]) => {
    const text = JSON.stringify(v);
    const i = at % (text.length + 1);
    return text.slice(0, i) + insert + text.slice(i + remove);
  });
}
