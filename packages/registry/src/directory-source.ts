import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { RegisteredSchema, SchemaReference, SchemaSource, SchemaType, VersionedSchema } from './schema-source.js';

/** `v<version>.id<id>.<ext>`: the version in its subject and the global id, as the registry would give them. */
const SCHEMA_FILE = /^v([1-9][0-9]{0,8})\.id([1-9][0-9]{0,9})\.(avsc|proto|json)$/;
/** `v<version>.id<id>.references.json`: the schema references of that file, as Confluent's API writes them. */
const REFERENCES_FILE = /^v([1-9][0-9]{0,8})\.id([1-9][0-9]{0,9})\.references\.json$/;
const TYPE_OF_EXTENSION: Readonly<Record<string, SchemaType>> = { avsc: 'AVRO', proto: 'PROTOBUF', json: 'JSON' };

/** A schema directory that cannot be used, with every problem found (each names its file). */
export class SchemaDirectoryError extends Error {
  override readonly name = 'SchemaDirectoryError';
  constructor(
    message: string,
    readonly problems: readonly string[],
  ) {
    super(message);
  }
}

/**
 * The subject a folder of a schema directory holds: its name, with `%2F` for a `/` (Confluent's Protobuf
 * serializer registers each import under its path, e.g. `acme/common/money.proto`, which no folder name
 * can hold) and `%25` for a `%`, as in a URL path segment. Undefined for a `%` that starts no escape.
 */
export function subjectOfFolder(folder: string): string | undefined {
  if (!folder.includes('%')) return folder;
  try {
    return decodeURIComponent(folder);
  } catch {
    return undefined;
  }
}

/** One schema file of a directory: where it is and what it registers. */
export interface SchemaFile {
  readonly subject: string;
  readonly version: number;
  readonly path: string;
  readonly schema: RegisteredSchema;
}

/**
 * Reads a schema directory once: `<dir>/<subject>/v<version>.id<id>.avsc` (or `.proto`, `.json`; a `/` in
 * the subject written `%2F`, {@link subjectOfFolder}),
 * e.g. `schemas/bid-events-value/v2.id17.avsc` — schemas by subject, version and id, as a registry
 * holds them, for teams that pin their schemas in files (and for the demo and the tests). Every
 * problem is reported at once: a file name out of that pattern, an id given to two different
 * schemas, a version twice in a subject, an Avro schema that is not JSON.
 *
 * A schema that refers to other subjects' schemas (Avro named types, Protobuf imports, JSON Schema
 * `$ref`s) has its references next to it in `v<version>.id<id>.references.json`, a JSON array as
 * Confluent's API gives them: `[{"name": "demo/money.proto", "subject": "money", "version": 1}]`.
 * The subjects and versions named must be in the directory (checked at start).
 */
export function loadSchemaDirectory(dir: string, setting?: string): SchemaSource & { readonly files: readonly SchemaFile[] } {
  const where = setting === undefined ? `schema directory ${dir}` : `${setting} ${dir}`;
  let subjects: string[];
  try {
    subjects = readdirSync(dir).sort(); // folder names: the subjects, escaped (subjectOfFolder)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new SchemaDirectoryError(`${where} cannot be read (${code ?? (err as Error).message}): give a directory of <subject>/v<version>.id<id>.avsc files`, []);
  }
  const problems: string[] = [];
  const files: SchemaFile[] = [];
  const byId = new Map<number, SchemaFile>();
  for (const folder of subjects) {
    const subjectDir = join(dir, folder);
    if (!statSync(subjectDir).isDirectory()) {
      problems.push(`${subjectDir}: not a directory; the directory holds one folder per subject (e.g. bid-events-value/)`);
      continue;
    }
    const subject = subjectOfFolder(folder);
    if (subject === undefined) {
      problems.push(`${subjectDir}: a % in a subject folder starts an escape, %2F for / or %25 for % (e.g. acme%2Fcommon%2Fmoney.proto for the subject acme/common/money.proto)`);
      continue;
    }
    const versions = new Map<number, string>();
    const names = readdirSync(subjectDir).sort();
    const referencesOf = new Map<string, SchemaReference[]>();
    for (const name of names) {
      const refs = REFERENCES_FILE.exec(name);
      if (refs === null) continue;
      const parsed = readReferences(join(subjectDir, name), problems);
      if (parsed !== undefined) referencesOf.set(`v${refs[1]}.id${refs[2]}`, parsed);
    }
    for (const name of names) {
      const path = join(subjectDir, name);
      if (REFERENCES_FILE.test(name)) {
        if (!names.some((n) => SCHEMA_FILE.test(n) && n.startsWith(name.replace(/references\.json$/, '')))) problems.push(`${path}: no schema file v<version>.id<id>.<ext> of the same version and id next to it`);
        continue;
      }
      const match = SCHEMA_FILE.exec(name);
      if (match === null) {
        problems.push(`${path}: name it v<version>.id<id>.avsc (or .proto, .json), e.g. v1.id1.avsc`);
        continue;
      }
      const version = Number(match[1]);
      const id = Number(match[2]);
      const schemaType = TYPE_OF_EXTENSION[match[3] as string] as SchemaType;
      const text = readFileSync(path, 'utf8');
      if (schemaType !== 'PROTOBUF' && !isJson(text)) {
        problems.push(`${path}: not valid JSON (an ${schemaType === 'AVRO' ? 'Avro schema' : 'JSON Schema'} is a JSON document)`);
        continue;
      }
      const other = versions.get(version);
      if (other !== undefined) problems.push(`${path}: version ${version} of subject ${subject} is also ${other}`);
      versions.set(version, path);
      const file: SchemaFile = { subject, version, path, schema: { id, schemaType, schema: text, references: referencesOf.get(`v${version}.id${id}`) ?? [] } };
      const same = byId.get(id);
      if (same !== undefined && (same.schema.schema.trim() !== text.trim() || same.schema.schemaType !== schemaType)) {
        problems.push(`${path}: id ${id} is also ${same.path}, a different schema; an id names one schema (it may be registered under several subjects)`);
        continue;
      }
      byId.set(id, file);
      files.push(file);
    }
  }
  for (const file of files) {
    for (const ref of file.schema.references) {
      if (directoryVersion(files, ref.subject, ref.version) === null) problems.push(`${file.path}: its reference ${ref.name} names version ${ref.version} of subject ${ref.subject}, which the directory does not have`);
    }
  }
  if (problems.length > 0) {
    throw new SchemaDirectoryError(`${where} cannot be used (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n${problems.map((p) => `  - ${p}`).join('\n')}`, problems);
  }
  return {
    description: where,
    files,
    schemaById: (id) => Promise.resolve(byId.get(id)?.schema ?? null),
    schemaByVersion: (subject, version) => Promise.resolve(directoryVersion(files, subject, version)),
  };
}

/** Version `version` of `subject` among a schema directory's files. */
export function directoryVersion(files: readonly SchemaFile[], subject: string, version: number): VersionedSchema | null {
  const file = files.find((f) => f.subject === subject && f.version === version);
  if (file === undefined) return null;
  const { id, schemaType, schema, references } = file.schema;
  return { subject, version, id, schemaType, schema, references };
}

/** A references file: a JSON array of `{name, subject, version}`; each problem names the file. */
function readReferences(path: string, problems: string[]): SchemaReference[] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    problems.push(`${path}: not valid JSON (${(err as Error).message})`);
    return undefined;
  }
  const valid =
    Array.isArray(parsed) &&
    parsed.every((r) => typeof r === 'object' && r !== null && typeof (r as SchemaReference).name === 'string' && typeof (r as SchemaReference).subject === 'string' && Number.isInteger((r as SchemaReference).version) && (r as SchemaReference).version > 0);
  if (!valid) {
    problems.push(`${path}: give a JSON array of references, e.g. [{"name": "demo/money.proto", "subject": "money", "version": 1}]`);
    return undefined;
  }
  return (parsed as SchemaReference[]).map(({ name, subject, version }) => ({ name, subject, version }));
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
