import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '@wirestream/config';
import { KEY_STYLES, type KeyStyle } from '@wirestream/transform';
import { createSchemaSource, schemaSourceSpec } from './schema-source-config.js';
import { SdlFromAvroError, sdlFromShape, type SdlFromAvroOptions } from './sdl-from-avro.js';
import { readSubjectHistory, SubjectShapeError } from './subject-shape.js';
import type { SubjectSchema } from './subject-schemas.js';

/** Exit codes: sysexits.h, as the apps use them. */
export const EXIT_OK = 0;
export const EXIT_USAGE = 64;
export const EXIT_UNAVAILABLE = 69;
export const EXIT_CONFIG = 78;

export const SCHEMA_CLI_USAGE = `Usage: wirestream-schema from-registry --topic <topic> --field <subscriptionField> [options]

Prints GraphQL SDL for the topic's value schema (Avro, Protobuf or JSON Schema): object types, enums
and nullability from every version of the subject (a field some versions lack is nullable), field names in the key style, and the Subscription
field bound by @topic(format: AVRO | PROTOBUF | JSON_SCHEMA). Review it, then point SCHEMA_PATH at it
(docs/schema.md).

Where the schema comes from (one of them; or SCHEMA_REGISTRY_URL / SCHEMA_DIR from the environment):
  --registry-url <url>   Confluent-compatible Schema Registry (comma-separated URLs are tried in order);
                         auth and TLS from SCHEMA_REGISTRY_USERNAME / _PASSWORD / _BEARER_TOKEN / _CA_FILE
  --schema-dir <dir>     a schema directory: <subject>/v<version>.id<id>.avsc|.proto|.json (e.g. apps/demo/schemas)
Options:
  --topic <topic>        the Kafka topic (required)
  --field <name>         the Subscription field to bind it to, e.g. bidPlaced (required)
  --subject <subject>    the value schema's subject (default <topic>-value, Confluent's TopicNameStrategy)
  --key <field>          the routing key as published, e.g. listing_id (also the field's filter argument)
  --message <name>       Protobuf: the message the topic carries: its full name (shop.Order.Line), its path in the
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

/** Runs `wirestream-schema <argv>` and resolves with the exit code; `bin/wirestream-schema.ts` passes the process's own streams. */
export async function runSchemaCli(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        'registry-url': { type: 'string' },
        'schema-dir': { type: 'string' },
        topic: { type: 'string' },
        field: { type: 'string' },
        subject: { type: 'string' },
        key: { type: 'string' },
        message: { type: 'string' },
        'key-style': { type: 'string' },
        help: { type: 'boolean' },
      },
    });
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
  const { topic, field, key } = values;
  if (topic === undefined || topic.trim() === '') return usage('--topic is required');
  if (field === undefined || field.trim() === '') return usage('--field is required');
  const keyStyle = values['key-style'] ?? io.env['INGEST_KEY_STYLE'] ?? 'snake';
  if (!(KEY_STYLES as readonly string[]).includes(keyStyle)) return usage(`--key-style must be one of ${KEY_STYLES.join(', ')}, got ${JSON.stringify(keyStyle)}`);
  const subject = values.subject ?? `${topic}-value`;

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
    configured = await createSchemaSource(loadConfig(schemaSourceSpec, env), [`subject ${subject}`]);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    io.stderr(`wirestream-schema: ${flagProblems(err, values)}\n`);
    return EXIT_CONFIG;
  }
  if (configured === undefined) return usage('give --registry-url or --schema-dir');
  let versions;
  try {
    versions = await configured.subjects.versions(subject);
  } catch (err) {
    io.stderr(`wirestream-schema: ${configured.subjects.description} did not answer for subject ${subject}: ${(err as Error).message}\n`);
    return EXIT_UNAVAILABLE;
  }
  const latest = versions?.at(-1);
  if (versions === null || latest === undefined) {
    io.stderr(`wirestream-schema: ${configured.subjects.description} has no subject ${subject}: check --topic, or give the value schema's --subject\n`);
    return EXIT_CONFIG;
  }
  try {
    io.stdout(await sdlOfSubject(versions, { topic, field, key, subject, keyStyle: keyStyle as KeyStyle }, values.message, configured.subjects));
  } catch (err) {
    if (!(err instanceof SdlFromAvroError || err instanceof SubjectShapeError)) throw err;
    io.stderr(`wirestream-schema: subject ${subject} (version ${latest.version}, id ${latest.id}): ${err.message}\n`);
    return EXIT_CONFIG;
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
 * The SDL of every version of a subject (`versions` oldest first), by the latest's type: what events of
 * any version publish (decision 0035), references looked up through the same source.
 */
async function sdlOfSubject(versions: readonly SubjectSchema[], options: Omit<SdlFromAvroOptions, 'schema'>, message: string | undefined, subjects: Parameters<typeof readSubjectHistory>[1]): Promise<string> {
  const latest = versions.at(-1) as SubjectSchema;
  if (message !== undefined && latest.schemaType !== 'PROTOBUF') throw new SubjectShapeError(`--message is for Protobuf subjects; this one is ${latest.schemaType}`);
  const other = versions.find((v) => v.schemaType !== latest.schemaType);
  if (other !== undefined) throw new SubjectShapeError(`version ${other.version} (id ${other.id}) is ${other.schemaType} and the latest ${latest.schemaType}: one topic carries one format`);
  const top = await readSubjectHistory(versions, subjects, { message, fallbackName: options.topic });
  return sdlFromShape(top.shape, FORMAT_OF_TYPE[latest.schemaType], options);
}
