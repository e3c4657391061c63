import { AvroShapeError, readAvroShape, type AvroSlot } from './avro-shape.js';
import { JsonSchemaShapeError, readJsonSchemaShape } from './json-schema-shape.js';
import { ProtobufSchemaError } from './schema-errors.js';
import { mergeVersionSlots } from './shape-history.js';
import { referenceTexts, resolveReferences, SchemaReferenceError } from './schema-references.js';
import type { SubjectSchema, SubjectSchemas } from './subject-schemas.js';

/** A subject's schema that cannot be read into shapes (with its references). */
export class SubjectShapeError extends Error {
  override readonly name = 'SubjectShapeError';
}

export interface SubjectShapeOptions {
  /** Protobuf: the message of the file (full name, path in the file, or simple name; nested too): PROTOBUF_MESSAGE_RULE. */
  readonly message?: string | undefined;
  /** Protobuf without `message`: a message of this name is taken when the file has one (the SDL's payload type). */
  readonly preferred?: string | undefined;
  /** JSON Schema: names the top object type when the schema has no `title`. */
  readonly fallbackName: string;
}

/**
 * The payload shape of a subject's schema, whatever its type, with its schema references looked up
 * through the same source (subject and version): Avro named types, Protobuf imports, JSON Schema `$ref`s.
 * Rejects as the source does when it cannot answer; throws {@link SubjectShapeError} for a schema
 * (or reference) that cannot be read.
 */
export async function readSubjectShape(schema: SubjectSchema, subjects: Pick<SubjectSchemas, 'schemaByVersion'>, options: SubjectShapeOptions): Promise<AvroSlot> {
  try {
    const references = await resolveReferences(schema.references, (subject, version) => subjects.schemaByVersion(subject, version));
    switch (schema.schemaType) {
      case 'AVRO':
        return readAvroShape(schema.schema, references.map((r) => r.schema));
      case 'PROTOBUF': {
        // protobufjs is imported with the first Protobuf subject (decision 0031).
        const { readProtobufShapes } = await import('./protobuf-shape.js');
        const shapes = readProtobufShapes(schema.schema, referenceTexts(references));
        if (options.message !== undefined && shapes.find(options.message) === undefined) {
          throw new SubjectShapeError(`the .proto file has no message ${options.message}: one of ${shapes.paths.join(', ')} (a nested message by its path, e.g. Outer.Inner, or its full name)`);
        }
        return { shape: shapes.pick(options.message ?? options.preferred), nullable: false };
      }
      case 'JSON':
        return readJsonSchemaShape(schema.schema, options.fallbackName, referenceTexts(references));
    }
  } catch (err) {
    if (err instanceof AvroShapeError || err instanceof ProtobufSchemaError || err instanceof JsonSchemaShapeError || err instanceof SchemaReferenceError) throw new SubjectShapeError(err.message);
    throw err;
  }
}

/**
 * The payload shape of every version of a subject, merged (`shape-history.ts`, decision 0035): what
 * events of any version publish. `versions` oldest first, as {@link SubjectSchemas.versions} gives them;
 * the latest picks the Protobuf message (`message`, else `preferred`, else the file's first that no
 * other holds) and the older ones take the message of that name when they have it. Throws
 * {@link SubjectShapeError} naming the version that cannot be read.
 */
export async function readSubjectHistory(versions: readonly SubjectSchema[], subjects: Pick<SubjectSchemas, 'schemaByVersion'>, options: SubjectShapeOptions): Promise<AvroSlot> {
  const latest = versions.at(-1);
  if (latest === undefined) throw new SubjectShapeError('the subject has no version');
  const read = async (schema: SubjectSchema, shapeOptions: SubjectShapeOptions): Promise<AvroSlot> => {
    try {
      return await readSubjectShape(schema, subjects, shapeOptions);
    } catch (err) {
      if (!(err instanceof SubjectShapeError) || schema === latest) throw err;
      throw new SubjectShapeError(`version ${schema.version} (id ${schema.id}): ${err.message}`);
    }
  };
  const top = await read(latest, options);
  const preferred = top.shape.kind === 'record' ? top.shape.name : options.preferred;
  const slots = [];
  for (const schema of versions.slice(0, -1)) slots.push({ version: schema.version, slot: await read(schema, { preferred, fallbackName: options.fallbackName }) });
  slots.push({ version: latest.version, slot: top });
  return mergeVersionSlots(slots);
}
