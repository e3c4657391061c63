import { Kind, OperationTypeNode, parse, print, Source, type DefinitionNode, type DirectiveDefinitionNode, type DocumentNode } from 'graphql';
import type { SchemaProblem } from './errors.js';
import { LOOKUP_DIRECTIVE_SDL } from './lookup-bindings.js';
import { problemAt, SCHEMA_GUIDE } from './schema-problems.js';
import { KEY_FORMAT_ENUM, KEY_FORMAT_ENUM_SDL, KEY_FORMATS, TOPIC_FORMAT_ENUM, TOPIC_FORMAT_ENUM_SDL, TOPIC_FORMATS } from './topic-formats.js';

/**
 * What a user's SDL may leave out: the loader adds these when they are absent, so a schema needs
 * only its event types and `type Subscription { … @topic(…) }`.
 */

/** The directive that binds a Subscription field to a Kafka topic; see docs/schema.md. */
export const TOPIC_DIRECTIVE_SDL =
  `directive @topic(name: String!, key: String, shards: Int = 16, format: ${TOPIC_FORMAT_ENUM} = JSON, keyFormat: ${KEY_FORMAT_ENUM} = STRING, subject: String, snapshot: Boolean = false, headers: [String!], conflate: Boolean = false) on FIELD_DEFINITION`;

// GraphQL requires a query root even for a subscriptions-only API (without it every operation is
// refused with "Query root type must be provided"); the gateway answers `topics` from the root value.
const QUERY_ROOT_SDL = 'type Query {\n  "Names of the Kafka topics this schema serves."\n  topics: [String!]!\n}';

// @topic's arguments as the routing reads them. A declaration of the user's own must have exactly
// these (only the defaults of `shards`, `format` and `keyFormat` may differ), or routes would read
// arguments it does not have; `format`, `keyFormat`, `subject`, `snapshot`, `headers` and `conflate` may be left out (declarations written
// before they existed): the topic is then JSON with string keys, its subject `<topic>-value`.
const TOPIC_ARGUMENT_TYPES: ReadonlyMap<string, string> = new Map([
  ['name', 'String!'],
  ['key', 'String'],
  ['shards', 'Int'],
]);
const OPTIONAL_TOPIC_ARGUMENT_TYPES: ReadonlyMap<string, string> = new Map([
  ['format', TOPIC_FORMAT_ENUM],
  ['keyFormat', KEY_FORMAT_ENUM],
  ['subject', 'String'],
  ['snapshot', 'Boolean'],
  ['headers', '[String!]'],
  ['conflate', 'Boolean'],
]);
const FORMAT_ENUMS: readonly { readonly name: string; readonly values: readonly string[]; readonly sdl: string }[] = [
  { name: TOPIC_FORMAT_ENUM, values: TOPIC_FORMATS, sdl: TOPIC_FORMAT_ENUM_SDL },
  { name: KEY_FORMAT_ENUM, values: KEY_FORMATS, sdl: KEY_FORMAT_ENUM_SDL },
];

/** A user's SDL with what it left out added. */
export interface CompletedSdl {
  /** The user's definitions, then the added ones. */
  readonly document: DocumentNode;
  /** The user's text, then the added text: line numbers of the user's part are unchanged. */
  readonly sdl: string;
  /** What was added, e.g. `['directive @topic', 'enum TopicFormat', 'enum TopicKeyFormat', 'type Query']`. */
  readonly added: readonly string[];
  /** A declaration that stands in the way of an addition (an @topic of another shape, a query-less schema block). */
  readonly problems: readonly SchemaProblem[];
  /** False when the SDL declares an @topic of another shape: its bindings cannot be read as routes. */
  readonly topicDirectiveUsable: boolean;
}

/** Adds `directive @topic` and `type Query` to `document` (parsed from `sdl`) where it has none. */
export function completeSdl(sdl: string, document: DocumentNode): CompletedSdl {
  const problems: SchemaProblem[] = [];
  const additions: { readonly what: string; readonly text: string }[] = [];

  const declared = document.definitions.find(isTopicDirective);
  if (declared === undefined) additions.push({ what: 'directive @topic', text: TOPIC_DIRECTIVE_SDL });
  const declarationProblems = declared === undefined ? [] : checkTopicDeclaration(declared);
  problems.push(...declarationProblems);
  const topicDirectiveUsable = declarationProblems.length === 0;
  for (const formatEnum of FORMAT_ENUMS) {
    const own = document.definitions.find((d) => 'name' in d && d.name?.value === formatEnum.name);
    if (own === undefined) additions.push({ what: `enum ${formatEnum.name}`, text: formatEnum.sdl });
    else problems.push(...checkFormatEnum(own, formatEnum));
  }

  // @lookup is declared for the SDL only when it uses it: a schema without look-ups is served as it was.
  if (usesDirective(document, 'lookup') && !document.definitions.some((d) => d.kind === Kind.DIRECTIVE_DEFINITION && d.name.value === 'lookup')) {
    additions.push({ what: 'directive @lookup', text: LOOKUP_DIRECTIVE_SDL });
  }

  const schemaBlock = document.definitions.find((d) => d.kind === Kind.SCHEMA_DEFINITION);
  if (schemaBlock !== undefined) {
    if (!schemaBlock.operationTypes.some((type) => type.operation === OperationTypeNode.QUERY)) {
      problems.push(
        problemAt(
          schemaBlock,
          'schema',
          'the schema { … } block names no query root, and GraphQL needs one: add `query: Query` and a `type Query { … }`, ' +
            'or delete the block (Wirestream then adds a Query root itself)',
        ),
      );
    }
  } else if (!document.definitions.some((d) => d.kind === Kind.OBJECT_TYPE_DEFINITION && d.name.value === 'Query')) {
    additions.push({ what: 'type Query', text: QUERY_ROOT_SDL });
  }

  if (additions.length === 0) return { document, sdl, added: [], problems, topicDirectiveUsable };
  const addedText = `# Added by Wirestream because the schema above does not declare it (${SCHEMA_GUIDE}).\n${additions.map((a) => a.text).join('\n\n')}\n`;
  const addedDocument = parse(new Source(addedText, 'added by Wirestream'));
  return {
    document: { kind: Kind.DOCUMENT, definitions: [...document.definitions, ...addedDocument.definitions] },
    sdl: `${sdl.trimEnd()}\n\n${addedText}`,
    added: additions.map((a) => a.what),
    problems,
    topicDirectiveUsable,
  };
}

function usesDirective(document: DocumentNode, name: string): boolean {
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OBJECT_TYPE_DEFINITION && definition.kind !== Kind.OBJECT_TYPE_EXTENSION) continue;
    for (const field of definition.fields ?? []) if (field.directives?.some((d) => d.name.value === name)) return true;
  }
  return false;
}

function isTopicDirective(definition: DefinitionNode): definition is DirectiveDefinitionNode {
  return definition.kind === Kind.DIRECTIVE_DEFINITION && definition.name.value === 'topic';
}

function checkTopicDeclaration(node: DirectiveDefinitionNode): SchemaProblem[] {
  const declared = new Map((node.arguments ?? []).map((arg) => [arg.name.value, print(arg.type)]));
  const sameArguments =
    [...TOPIC_ARGUMENT_TYPES].every(([name, type]) => declared.get(name) === type) &&
    [...declared].every(([name, type]) => TOPIC_ARGUMENT_TYPES.get(name) === type || OPTIONAL_TOPIC_ARGUMENT_TYPES.get(name) === type);
  const onFields = node.locations.some((location) => location.value === 'FIELD_DEFINITION');
  if (sameArguments && onFields) return [];
  const { description: _description, ...signature } = node;
  const got = print(signature);
  return [
    problemAt(
      node,
      '@topic',
      `declared as \`${got}\`, which is not Wirestream's \`${TOPIC_DIRECTIVE_SDL}\`: ` +
        'delete the declaration (the loader adds it) or make it match (only the defaults of shards, format and keyFormat may differ; format, keyFormat and subject may be left out)',
    ),
  ];
}

/** A type of the user's own named like a format enum must be that enum, with exactly its values. */
function checkFormatEnum(node: DefinitionNode, expected: (typeof FORMAT_ENUMS)[number]): SchemaProblem[] {
  const values = node.kind === Kind.ENUM_TYPE_DEFINITION ? (node.values ?? []).map((v) => v.name.value) : undefined;
  if (values !== undefined && values.length === expected.values.length && expected.values.every((v) => values.includes(v))) return [];
  return [
    problemAt(
      node,
      expected.name,
      `${expected.name} is the enum @topic takes (${expected.values.join(', ')}); this SDL declares a ${values === undefined ? 'type' : `different enum (${values.join(', ')})`} of that name: ` +
        'delete it (the loader adds the enum) or rename it',
    ),
  ];
}
