/**
 * The GraphQL parameters of an SSE request (external input, validated here): a JSON body for `POST`,
 * the query string for `GET` (what EventSource can send), as graphql-sse and GraphQL over HTTP define
 * them: `query`, `operationName`, and `variables` / `extensions` as JSON objects.
 */
import type { SseParams } from './sse-session.js';

/** Validates a parsed JSON body. Returns the parameters or an error message naming the field. */
export function parseSseBody(text: string): SseParams | string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return 'the request body is not valid JSON: send { "query": "…", "variables": {…} }';
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return 'the request body must be a JSON object { "query": "…" }';
  const { query, operationName, variables, extensions } = body as Record<string, unknown>;
  return checkParams(query, operationName, variables, extensions);
}

/**
 * Reads the parameters of a GET from its query string (without the leading `?`). `since` (a replay
 * from a time, for an EventSource URL) is `extensions.since`: giving both is refused.
 */
export function parseSseQuery(search: URLSearchParams): SseParams | string {
  const variables = jsonParam(search, 'variables');
  if (typeof variables === 'string') return variables;
  const extensions = jsonParam(search, 'extensions');
  if (typeof extensions === 'string') return extensions;
  const params = checkParams(search.get('query') ?? undefined, search.get('operationName') ?? undefined, variables.value, extensions.value);
  const since = search.get('since');
  if (typeof params === 'string' || since === null) return params;
  if (params.extensions?.['since'] !== undefined) return 'since is given twice: as the since query parameter and in extensions.since; keep one';
  return { ...params, extensions: { ...params.extensions, since } };
}

function jsonParam(search: URLSearchParams, name: string): { value: unknown } | string {
  const text = search.get(name);
  if (text === null || text === '') return { value: undefined };
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return `the ${name} query parameter is not valid JSON`;
  }
}

function checkParams(query: unknown, operationName: unknown, variables: unknown, extensions: unknown): SseParams | string {
  if (typeof query !== 'string' || query === '') return 'query must be a non-empty string (the GraphQL document)';
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return 'operationName must be a string';
  if (!isObjectOrAbsent(variables)) return 'variables must be a JSON object';
  if (!isObjectOrAbsent(extensions)) return 'extensions must be a JSON object';
  return {
    query,
    operationName: (operationName) ?? null,
    variables: (variables as Record<string, unknown> | null | undefined) ?? null,
    extensions: (extensions as Record<string, unknown> | null | undefined) ?? null,
  };
}

function isObjectOrAbsent(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'object' && !Array.isArray(value));
}
