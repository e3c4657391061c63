import type { SchemaReference, SchemaType, VersionedSchema } from './schema-source.js';

/** A referenced schema with its text, by the name the referring schema uses for it. */
export interface ResolvedReference {
  readonly name: string;
  readonly subject: string;
  readonly version: number;
  readonly schemaType: SchemaType;
  readonly schema: string;
}

/** A reference the source does not have (no such subject or version): the schema cannot be used. */
export class SchemaReferenceError extends Error {
  override readonly name = 'SchemaReferenceError';
}

/** How a reference's subject and version are looked up (`SchemaSource.schemaByVersion`, `SubjectSchemas.schemaByVersion`). */
export type VersionLookup = (subject: string, version: number) => Promise<VersionedSchema | null>;

/**
 * The schemas `references` name, and theirs in turn, each once, in dependency order (a schema after
 * those it refers to, as avsc must read Avro named types). Throws {@link SchemaReferenceError}
 * naming the reference when the source has no such subject or version; rejects as the lookup
 * does when the source could not answer (the caller waits and retries).
 */
export async function resolveReferences(references: readonly SchemaReference[], lookup: VersionLookup): Promise<ResolvedReference[]> {
  const resolved: ResolvedReference[] = [];
  const visiting = new Set<string>();
  const done = new Set<string>();
  async function visit(ref: SchemaReference, path: readonly string[]): Promise<void> {
    const key = `${ref.subject}/${ref.version}`;
    if (done.has(key) || visiting.has(key)) return;
    visiting.add(key);
    const found = await lookup(ref.subject, ref.version);
    if (found === null) {
      const via = path.length === 0 ? '' : ` (through ${path.join(' → ')})`;
      throw new SchemaReferenceError(`its reference ${ref.name} names version ${ref.version} of subject ${ref.subject}, which the source does not have${via}`);
    }
    for (const inner of found.references) await visit(inner, [...path, ref.name]);
    visiting.delete(key);
    done.add(key);
    resolved.push({ name: ref.name, subject: ref.subject, version: ref.version, schemaType: found.schemaType, schema: found.schema });
  }
  for (const ref of references) await visit(ref, []);
  return resolved;
}

/** The referenced texts by the name the schemas use (Protobuf imports, JSON Schema `$ref`s). */
export function referenceTexts(resolved: readonly ResolvedReference[]): Map<string, string> {
  return new Map(resolved.map((r) => [r.name, r.schema]));
}
