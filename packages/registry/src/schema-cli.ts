import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '@wirestream/config';
import { KEY_STYLES, type KeyStyle } from '@wirestream/transform';
import { createSchemaSource, schemaSourceSpec } from './schema-source-config.js';
import type { AvroShape } from './avro-shape.js';
import { SdlFromAvroError, sdlPartsFromShape, type SdlFormat } from './sdl-from-avro.js';
import { mergeSdlParts, renderSdl, SdlCollisionError } from './sdl-parts.js';
import { readSubjectHistory, SubjectShapeError } from './subject-shape.js';
import type { SubjectSchema, SubjectSchemas } from './subject-schemas.js';

/** Exit codes: sysexits.h, as the apps use them. */
export const EXIT_OK = 0;
export const EXIT_USAGE = 64;
export const EXIT_UNAVAILABLE = 69;
export const EXIT_CONFIG = 78;

export const SCHEMA_CLI_USAGE = `Usage: wirestream-schema from-registry --topic <topic> --field <subscriptionField> [options]
       wirestream-schema from-registry --topic <topic>:<field>[:<key>] [--topic …] [options]
       wirestream-schema from-registry --all [options]

Prints GraphQL SDL for the topics' value schemas (Avro, Protobuf or JSON Schema): object types, enums
and nullability from every version of each subject (a field some versions lack is nullable), field names in the key style, and
the Subscription fields bound by @topic(format: AVRO | PROTOBUF | JSON_SCHEMA). Several topics make one SDL: a type
they write alike is written once, one they write differently is refused by name (or prefixed: --prefix-types).
Review it, then point SCHEMA_PATH at it (docs/schema.md).

Where the schema comes from (one of them; or SCHEMA_REGISTRY_URL / SCHEMA_DIR from the environment):
  --registry-url <url>   Confluent-compatible Schema Registry (comma-separated URLs are tried in order);
                         auth and TLS from SCHEMA_REGISTRY_USERNAME / _PASSWORD / _BEARER_TOKEN / _CA_FILE
  --schema-dir <dir>     a schema directory: <subject>/v<version>.id<id>.avsc|.proto|.json (e.g. apps/demo/schemas;
                         a / in a subject is %2F in its folder name)
Options:
  --topic <topic>        the Kafka topic; repeat it as <topic>:<field>[:<key>] for several topics in one SDL
  --field <name>         the Subscription field to bind a single --topic to, e.g. bidPlaced
  --all                  every <topic>-value subject of the source (Confluent's TopicNameStrategy), each bound to
                         the topic's name in camelCase (bid-events → bidEvents), without a key
  --prefix-types         a type name two subjects write differently is written once per subject, prefixed with its
                         Subscription field in PascalCase (BidPlacedMoney, PriceChangedMoney)
  --subject <subject>    a single topic's value schema subject (default <topic>-value, Confluent's TopicNameStrategy)
  --key <field>          a single topic's routing key as published, e.g. listing_id (also the field's filter argument)
  --message <name>       Protobuf, a single topic: the message it carries: its full name (shop.Order.Line), its path in the
                         file (Order.Line: nested messages too) or its simple name (default: the file's first
                         top-level message that no other message holds, e.g. BidPlaced, not the Money it uses)
  --key-style <style>    ${KEY_STYLES.join(' | ')}: as ingest's INGEST_KEY_STYLE (default: INGEST_KEY_STYLE, else snake)
  --help
`;

export interface CliIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

const CLI_OPTIONS = {
  'registry-url': { type: 'string' },
  'schema-dir': { type: 'string' },
  topic: { type: 'string', multiple: true },
  field: { type: 'string' },
  all: { type: 'boolean' },
  'prefix-types': { type: 'boolean' },
  subject: { type: 'string' },
  key: { type: 'string' },
  message: { type: 'string' },
  'key-style': { type: 'string' },
  help: { type: 'boolean' },
} as const;

type CliValues = ReturnType<typeof parseArgs<{ options: typeof CLI_OPTIONS; allowPositionals: true }>>['values'];

/** One Subscription field to write: its topic, the subject its schema is under, and what the flags said of it. */
interface TopicSpec {
  readonly topic: string;
  readonly field: string;
  readonly key?: string | undefined;
  readonly subject: string;
  readonly message?: string | undefined;
}

/** Runs `wirestream-schema <argv>` and resolves with the exit code; `bin/wirestream-schema.ts` passes the process's own streams. */
export async function runSchemaCli(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], allowPositionals: true, options: CLI_OPTIONS });
  } catch (err) {
    io.stderr(`wirestream-schema: ${(err as Error).message}\n\n${SCHEMA_CLI_USAGE}`);
    return EXIT_USAGE;
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    io.stdout(SCHEMA_CLI_USAGE);
    return EXIT_OK;
  }
  const usage = (problem: string): number => {
    io.stderr(`wirestream-schema: ${problem}\n\n${SCHEMA_CLI_USAGE}`);
    return EXIT_USAGE;
  };
  if (positionals.length !== 1 || positionals[0] !== 'from-registry') return usage(`expected the command from-registry, got ${positionals.length === 0 ? 'none' : positionals.join(' ')}`);
  const asked = topicsGiven(values);
  if ('problem' in asked) return usage(asked.problem);
  const given = asked.topics;
  const keyStyle = values['key-style'] ?? io.env['INGEST_KEY_STYLE'] ?? 'snake';
  if (!(KEY_STYLES as readonly string[]).includes(keyStyle)) return usage(`--key-style must be one of ${KEY_STYLES.join(', ')}, got ${JSON.stringify(keyStyle)}`);

  // The apps' own settings and checks (auth, TLS, one source only): flags stand in for SCHEMA_REGISTRY_URL / SCHEMA_DIR.
  const env: Record<string, string | undefined> = { ...io.env };
  if (values['registry-url'] !== undefined) {
    env['SCHEMA_REGISTRY_URL'] = values['registry-url'];
    if (values['schema-dir'] === undefined) delete env['SCHEMA_DIR'];
  }
  if (values['schema-dir'] !== undefined) {
    env['SCHEMA_DIR'] = values['schema-dir'];
    if (values['registry-url'] === undefined) delete env['SCHEMA_REGISTRY_URL'];
  }
  if (env['SCHEMA_REGISTRY_URL'] === undefined && env['SCHEMA_DIR'] === undefined) return usage('give --registry-url or --schema-dir (or set SCHEMA_REGISTRY_URL or SCHEMA_DIR)');
  let configured;
  try {
    configured = await createSchemaSource(loadConfig(schemaSourceSpec, env), given === 'all' ? ['--all'] : given.map((t) => `subject ${t.subject}`));
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    io.stderr(`wirestream-schema: ${flagProblems(err, values)}\n`);
    return EXIT_CONFIG;
  }
  if (configured === undefined) return usage('give --registry-url or --schema-dir');
  const failed = (code: number, problem: string): number => {
    io.stderr(`wirestream-schema: ${problem}\n`);
    return code;
  };
  let topics: readonly TopicSpec[];
  if (given === 'all') {
    let all;
    try {
      all = await configured.subjects.subjects();
    } catch (err) {
      return failed(EXIT_UNAVAILABLE, `${configured.subjects.description} did not list its subjects: ${(err as Error).message}`);
    }
    const found = topicsOfSubjects(all);
    if (typeof found === 'string') return failed(EXIT_CONFIG, `${configured.subjects.description}: ${found}`);
    topics = found;
  } else {
    topics = given;
  }
  return writeSdl(topics, { keyStyle: keyStyle as KeyStyle, prefixTypes: values['prefix-types'] === true, subjects: configured.subjects }, io, failed);
}

/**
 * The topics the flags name: `--all`, one `--topic T --field F` (with `--key`, `--subject`, `--message`), or
 * `--topic T:field[:key]` once or more. A string says what is wrong, naming the flag.
 */
function topicsGiven(values: CliValues): { readonly topics: readonly TopicSpec[] | 'all' } | { readonly problem: string } {
  const given = values.topic ?? [];
  if (values.all === true) {
    if (given.length > 0) return { problem: '--all takes every <topic>-value subject; give --topic or --all, not both' };
    const single = (['field', 'key', 'subject', 'message'] as const).find((flag) => values[flag] !== undefined);
    return single === undefined ? { topics: 'all' } : { problem: `--${single} is for a single --topic, not --all` };
  }
  if (given.length === 0) return { problem: '--topic is required (or --all)' };
  const colon = given.some((t) => t.includes(':'));
  if (given.length === 1 && !colon) {
    const [topic] = given as [string];
    if (topic.trim() === '') return { problem: '--topic is required (or --all)' };
    if (values.field === undefined || values.field.trim() === '') return { problem: '--field is required (or write --topic <topic>:<field>)' };
    return { topics: [{ topic, field: values.field, key: values.key, subject: values.subject ?? `${topic}-value`, message: values.message }] };
  }
  const misplaced = (['field', 'key'] as const).find((flag) => values[flag] !== undefined);
  if (misplaced !== undefined) return { problem: `--${misplaced} is for a single --topic <topic>; with ${colon && given.length === 1 ? '<topic>:<field>' : 'several topics'} write each as --topic <topic>:<field>[:<key>]` };
  if (given.length > 1) {
    const single = (['subject', 'message'] as const).find((flag) => values[flag] !== undefined);
    if (single !== undefined) return { problem: `--${single} is for a single --topic; with several, each topic's subject is <topic>-value` };
  }
  const specs: TopicSpec[] = [];
  for (const text of given) {
    const [topic = '', field = '', key, ...rest] = text.split(':');
    if (topic === '' || field === '' || key === '' || rest.length > 0) return { problem: `--topic ${JSON.stringify(text)}: write <topic>:<field> or <topic>:<field>:<key>` };
    if (specs.some((s) => s.field === field)) return { problem: `--topic ${JSON.stringify(text)}: field ${field} is already bound to topic ${specs.find((s) => s.field === field)?.topic ?? ''}` };
    specs.push({ topic, field, key, subject: values.subject ?? `${topic}-value`, message: values.message });
  }
  return { topics: specs };
}

/** `--all`: a topic per `<topic>-value` subject, its field the topic in camelCase; a string when none is there or one has no field name. */
function topicsOfSubjects(subjects: readonly string[]): readonly TopicSpec[] | string {
  const specs: TopicSpec[] = [];
  for (const subject of subjects) {
    if (!subject.endsWith('-value') || subject.length === '-value'.length) continue;
    const topic = subject.slice(0, -'-value'.length);
    const words = topic.split(/[^A-Za-z0-9]+/).filter((w) => w !== '');
    const field = words.map((w, i) => (i === 0 ? w.charAt(0).toLowerCase() + w.slice(1) : w.charAt(0).toUpperCase() + w.slice(1))).join('');
    if (!/^[A-Za-z_]/.test(field)) return `topic ${topic} (subject ${subject}) makes no GraphQL field name: name its field with --topic ${topic}:<field>`;
    const clash = specs.find((s) => s.field === field);
    if (clash !== undefined) return `topics ${clash.topic} and ${topic} both make the field ${field}: name them with --topic <topic>:<field>`;
    specs.push({ topic, field, subject });
  }
  if (specs.length === 0) return `no subject is named <topic>-value (subjects: ${subjects.length === 0 ? 'none' : subjects.join(', ')}): name the topics with --topic`;
  return specs;
}

/** Reads every topic's subject (every version), then prints one SDL for them all; resolves with the exit code. */
async function writeSdl(
  topics: readonly TopicSpec[],
  options: { readonly keyStyle: KeyStyle; readonly prefixTypes: boolean; readonly subjects: SubjectSchemas },
  io: CliIo,
  failed: (code: number, problem: string) => number,
): Promise<number> {
  const { subjects, keyStyle } = options;
  const read: { readonly spec: TopicSpec; readonly payload: Awaited<ReturnType<typeof readSubjectHistory>>['shape']; readonly format: SdlFormat }[] = [];
  for (const spec of topics) {
    let versions;
    try {
      versions = await subjects.versions(spec.subject);
    } catch (err) {
      return failed(EXIT_UNAVAILABLE, `${subjects.description} did not answer for subject ${spec.subject}: ${(err as Error).message}`);
    }
    const latest = versions?.at(-1);
    if (versions === null || latest === undefined) {
      return failed(EXIT_CONFIG, `${subjects.description} has no subject ${spec.subject}: check --topic, or give the value schema's --subject`);
    }
    try {
      const shaped = await shapeOfSubject(versions, spec, subjects);
      // Written once here so that a schema GraphQL cannot hold is refused with its subject named.
      sdlPartsFromShape(shaped.payload, shaped.format, { ...spec, keyStyle });
      read.push({ spec, ...shaped });
    } catch (err) {
      if (!(err instanceof SdlFromAvroError || err instanceof SubjectShapeError)) throw err;
      return failed(EXIT_CONFIG, `subject ${spec.subject} (version ${latest.version}, id ${latest.id}): ${err.message}`);
    }
  }
  try {
    const parts = mergeSdlParts(read.length, (i, rename) => {
      const { spec, payload, format } = read[i] as (typeof read)[number];
      return sdlPartsFromShape(payload, format, { ...spec, keyStyle }, rename);
    }, options.prefixTypes);
    io.stdout(renderSdl(parts));
  } catch (err) {
    if (!(err instanceof SdlCollisionError)) throw err;
    return failed(EXIT_CONFIG, err.message.split('\n').join('\nwirestream-schema: '));
  }
  return EXIT_OK;
}

/** The flags that stand in for the apps' settings: a problem with a value given as a flag names the flag, not the variable. */
const FLAG_OF_VARIABLE: Readonly<Record<string, 'registry-url' | 'schema-dir'>> = { SCHEMA_REGISTRY_URL: 'registry-url', SCHEMA_DIR: 'schema-dir' };

function flagProblems(err: ConfigError, values: Partial<Record<'registry-url' | 'schema-dir', string>>): string {
  const fromFlag = (variable: string): string | undefined => {
    const flag = FLAG_OF_VARIABLE[variable];
    return flag !== undefined && values[flag] !== undefined ? `--${flag}` : undefined;
  };
  const lines = err.issues.map((issue) => {
    const flag = fromFlag(issue.variable);
    const problem = flag === undefined ? issue.problem : issue.problem.replace(new RegExp(`\\b${issue.variable}\\b`, 'g'), flag);
    // A problem naming the other source's variable (one source only) names its flag when a flag set it.
    const named = Object.keys(FLAG_OF_VARIABLE).reduce((text, variable) => (fromFlag(variable) === undefined ? text : text.replace(new RegExp(`\\b${variable}\\b`, 'g'), fromFlag(variable) as string)), problem);
    return `  - ${flag ?? issue.variable}: ${named}${issue.received === undefined ? '' : `; received ${issue.received}`}`;
  });
  const flagsGiven = err.issues.some((issue) => fromFlag(issue.variable) !== undefined);
  return `${err.issues.length === 1 ? '1 problem' : `${err.issues.length} problems`}:\n${lines.join('\n')}\nFix ${flagsGiven ? 'these flags (or the environment variables named)' : 'these environment variables'} and run again.`;
}

const FORMAT_OF_TYPE = { AVRO: 'AVRO', PROTOBUF: 'PROTOBUF', JSON: 'JSON_SCHEMA' } as const;

/**
 * The payload shape of every version of a subject (`versions` oldest first), by the latest's type: what
 * events of any version publish (decision 0035), references looked up through the same source.
 */
async function shapeOfSubject(versions: readonly SubjectSchema[], spec: TopicSpec, subjects: SubjectSchemas): Promise<{ readonly payload: AvroShape; readonly format: SdlFormat }> {
  const latest = versions.at(-1) as SubjectSchema;
  if (spec.message !== undefined && latest.schemaType !== 'PROTOBUF') throw new SubjectShapeError(`--message is for Protobuf subjects; this one is ${latest.schemaType}`);
  const other = versions.find((v) => v.schemaType !== latest.schemaType);
  if (other !== undefined) throw new SubjectShapeError(`version ${other.version} (id ${other.id}) is ${other.schemaType} and the latest ${latest.schemaType}: one topic carries one format`);
  const top = await readSubjectHistory(versions, subjects, { message: spec.message, fallbackName: spec.topic });
  return { payload: top.shape, format: FORMAT_OF_TYPE[latest.schemaType] };
}
