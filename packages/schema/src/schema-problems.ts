import { Kind, type ASTNode, type DocumentNode, type GraphQLError } from 'graphql';
import { SchemaError, type SchemaProblem } from './errors.js';

/** Where an SDL came from, for messages: a file (and the setting that named it), or a string. */
export interface SdlOrigin {
  /** The file read, or `undefined` for SDL passed as a string. */
  readonly path: string | undefined;
  /** The setting that named the file, e.g. `SCHEMA_PATH`. */
  readonly setting: string | undefined;
}

/** The guide a message points to for what a schema needs and what Wirestream adds. */
export const SCHEMA_GUIDE = 'docs/schema.md';

/** A problem placed at `node` (its first token), about `coordinate`. */
export function problemAt(node: ASTNode | undefined, coordinate: string | undefined, message: string): SchemaProblem {
  const start = node?.loc?.startToken;
  return { line: start?.line, column: start?.column, coordinate, message };
}

/**
 * A graphql-js error (syntax, SDL rule, schema rule) as a problem: its first location, and the
 * type or field around that location in `document`, so the message says where to look.
 */
export function problemOfGraphQLError(error: GraphQLError, document: DocumentNode | undefined): SchemaProblem {
  const location = error.locations?.[0];
  const offset = error.positions?.[0] ?? error.nodes?.[0]?.loc?.start;
  const coordinate = document === undefined || offset === undefined ? undefined : coordinateAt(document, offset);
  return { line: location?.line, column: location?.column, coordinate, message: error.message };
}

/** The innermost type (`E`), field (`E.f`) or directive (`@d`) definition whose text holds `offset`. */
function coordinateAt(document: DocumentNode, offset: number): string | undefined {
  const holds = (node: ASTNode): boolean => node.loc !== undefined && node.loc.start <= offset && offset < node.loc.end;
  for (const definition of document.definitions) {
    if (!holds(definition) || !('name' in definition) || definition.name === undefined) continue;
    if (definition.kind === Kind.DIRECTIVE_DEFINITION) return `@${definition.name.value}`;
    const fields = 'fields' in definition ? (definition.fields ?? []) : [];
    const field = fields.find(holds);
    return field === undefined ? definition.name.value : `${definition.name.value}.${field.name.value}`;
  }
  return undefined;
}

/**
 * One error for every problem found, in SDL order, e.g.
 * `SCHEMA_PATH /etc/ws/schema.graphql cannot be served (2 problems):` and one line per problem.
 */
export function schemaErrorOf(problems: readonly SchemaProblem[], origin: SdlOrigin): SchemaError {
  const sorted = dedupe(problems).sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
  const count = sorted.length === 1 ? '1 problem' : `${sorted.length} problems`;
  const lines = sorted.map((problem) => `  - ${placeOf(problem, origin)}${problem.message}`);
  const fix = origin.path === undefined ? 'Fix the SDL' : `Fix ${origin.path}`;
  return new SchemaError(
    `${describeOrigin(origin)} cannot be served (${count}):\n${lines.join('\n')}\n` +
      `${fix} and start again; what a schema needs and what Wirestream adds: ${SCHEMA_GUIDE}`,
    sorted,
  );
}

/** `SCHEMA_PATH /a/b.graphql`, `schema file /a/b.graphql` or `the schema`. */
export function describeOrigin({ path, setting }: SdlOrigin): string {
  if (path === undefined) return 'the schema';
  return setting === undefined ? `schema file ${path}` : `${setting} ${path}`;
}

// `/a/b.graphql:12:3 Subscription.x: `, the form editors and terminals turn into links.
function placeOf(problem: SchemaProblem, origin: SdlOrigin): string {
  const where =
    problem.line === undefined
      ? ''
      : origin.path === undefined
        ? `line ${problem.line}:${problem.column ?? 1} `
        : `${origin.path}:${problem.line}:${problem.column ?? 1} `;
  return problem.coordinate === undefined ? where : `${where}${problem.coordinate}: `;
}

// The same fault can be seen by two checks (e.g. graphql-js's rules and ours); say it once.
function dedupe(problems: readonly SchemaProblem[]): SchemaProblem[] {
  const seen = new Set<string>();
  return problems.filter((problem) => {
    const key = `${problem.line}:${problem.column}:${problem.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
