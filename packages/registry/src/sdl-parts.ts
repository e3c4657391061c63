import type { KeyStyle } from '@wirestream/transform';

/**
 * One subject's SDL in parts (`sdlPartsFromShape`), written alone or beside other subjects' by
 * {@link renderSdl}: `wirestream-schema from-registry` with several topics writes one SDL, each shared
 * type once ({@link mergeSdlParts}).
 */
export interface SdlParts {
  /** The value schema's subject, e.g. `bid-events-value`. */
  readonly subject: string;
  readonly keyStyle: KeyStyle;
  /** The Subscription field's name, e.g. `bidPlaced`. */
  readonly field: string;
  /** The Subscription field's line, e.g. `  bidPlaced(listing_id: ID): BidPlaced @topic(…)\n`. */
  readonly subscriptionField: string;
  /** Object types, enums and open enums the payload uses, by GraphQL name, in the order written. */
  readonly types: ReadonlyMap<string, SdlType>;
  /** Declared custom scalars (`Long`, `JSONObject`…) by name: their description. */
  readonly scalars: ReadonlyMap<string, string>;
}

/** A type block of {@link SdlParts}: its text, and the name the schema gave it (before any rename). */
export interface SdlType {
  readonly text: string;
  readonly schemaName: string;
}

/** Two subjects that write one type name differently (see {@link mergeSdlParts}). */
export interface SdlCollision {
  readonly typeName: string;
  readonly subjects: readonly [string, string];
  readonly fields: readonly [string, string];
}

/** Type names several subjects write differently, and no `--prefix-types` to tell them apart. */
export class SdlCollisionError extends Error {
  override readonly name = 'SdlCollisionError';
  constructor(readonly collisions: readonly SdlCollision[]) {
    super(collisions.map(collisionLine).join('\n'));
  }
}

function collisionLine({ typeName, subjects, fields }: SdlCollision): string {
  return `type ${typeName} is written differently by subject ${subjects[0]} and subject ${subjects[1]}: rename one in its schema, or give --prefix-types to write ${upperFirst(fields[0])}${typeName} and ${upperFirst(fields[1])}${typeName}`;
}

/**
 * The parts of several subjects, made to fit in one SDL: a type several subjects write alike is written
 * once; one they write differently is a collision, refused by name ({@link SdlCollisionError}) unless
 * `prefixTypes`, which writes it once per subject under the Subscription field's name in PascalCase
 * (`BidPlacedMoney`, `PriceChangedMoney`). A rename changes the types that use the renamed one, which
 * may make them differ in turn: `generate` runs again until no name is written two ways.
 */
export function mergeSdlParts(count: number, generate: (index: number, rename: (schemaName: string) => string) => SdlParts, prefixTypes: boolean): SdlParts[] {
  const renamed = Array.from({ length: count }, () => new Set<string>());
  let parts = renamed.map((_, i) => generate(i, (n) => n));
  for (;;) {
    const collisions = collisionsOf(parts);
    if (collisions.length === 0) return parts;
    if (!prefixTypes) throw refused(collisions, parts);
    let grown = false;
    for (const c of collisions) {
      for (const [index, schemaName] of [[c.first, c.firstSchemaName], [c.second, c.secondSchemaName]] as const) {
        const names = renamed[index] as Set<string>;
        if (!names.has(schemaName)) {
          names.add(schemaName);
          grown = true;
        }
      }
    }
    // Prefixed names that still meet (a schema that already names a type `BidPlacedMoney`): say so rather than loop.
    if (!grown) throw refused(collisions, parts);
    parts = renamed.map((names, i) => {
      const prefix = upperFirst(parts[i]?.field ?? '');
      return generate(i, (n) => (names.has(n) ? `${prefix}${n}` : n));
    });
  }
}

interface FoundCollision {
  readonly typeName: string;
  readonly first: number;
  readonly firstSchemaName: string;
  readonly second: number;
  readonly secondSchemaName: string;
}

function refused(collisions: readonly FoundCollision[], parts: readonly SdlParts[]): SdlCollisionError {
  const of = (index: number): SdlParts => parts[index] as SdlParts;
  return new SdlCollisionError(collisions.map((c) => ({ typeName: c.typeName, subjects: [of(c.first).subject, of(c.second).subject], fields: [of(c.first).field, of(c.second).field] })));
}

function collisionsOf(parts: readonly SdlParts[]): FoundCollision[] {
  const owners = new Map<string, { readonly index: number; readonly type: SdlType }>();
  const found: FoundCollision[] = [];
  parts.forEach((part, index) => {
    for (const [typeName, type] of part.types) {
      const owner = owners.get(typeName);
      if (owner === undefined) owners.set(typeName, { index, type });
      else if (owner.type.text !== type.text) found.push({ typeName, first: owner.index, firstSchemaName: owner.type.schemaName, second: index, secondSchemaName: type.schemaName });
    }
  });
  return found;
}

/**
 * The SDL of one or more subjects' parts (merged by {@link mergeSdlParts} when several): a header naming
 * the subjects, one `type Subscription`, each type once in the order first written, then the declared
 * scalars (one scalar several formats declare gets each of their descriptions).
 */
export function renderSdl(parts: readonly SdlParts[]): string {
  const types = new Map<string, string>();
  const scalars = new Map<string, string[]>();
  for (const part of parts) {
    for (const [typeName, type] of part.types) if (!types.has(typeName)) types.set(typeName, type.text);
    for (const [scalar, doc] of part.scalars) {
      const docs = scalars.get(scalar) ?? [];
      if (doc.trim() !== '' && !docs.includes(doc)) docs.push(doc);
      scalars.set(scalar, docs);
    }
  }
  const blocks = [...types.values(), ...[...scalars].map(([scalar, docs]) => `${description(docs.join('\n'))}scalar ${scalar}\n`)];
  const subjects = parts.map((p) => p.subject).join(', ');
  const keyStyle = parts[0]?.keyStyle ?? 'snake';
  const one = parts.length === 1;
  const header = `# Generated by wirestream-schema from-registry from ${subjects} (key style ${keyStyle}). Edit freely: the start-up check\n# compares every field left here with every version of ${one ? 'the subject' : 'its subject'} (docs/schema.md).\n`;
  const subscription = `type Subscription {\n${parts.map((p) => p.subscriptionField).join('')}}\n`;
  return `${header}\n${subscription}\n${blocks.join('\n')}`;
}

/** A GraphQL description line (a block string when it spans lines). */
export function description(doc: string | undefined, indent = ''): string {
  if (doc === undefined || doc.trim() === '') return '';
  if (!doc.includes('\n')) return `${indent}${JSON.stringify(doc)}\n`;
  return `${indent}"""\n${doc.replace(/"""/g, '\\"""').split('\n').map((l) => `${indent}${l}`).join('\n')}\n${indent}"""\n`;
}

function upperFirst(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
