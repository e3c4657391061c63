import { execute, type ExecutionResult } from 'graphql';
import type { WirestreamSchema } from '@wirestream/schema';
import type { CompiledQuery } from './operations.js';

/** Why a query got no result: its resolvers returned a promise. */
export const ASYNC_QUERY_REFUSED = 'Queries resolve synchronously here: asynchronous queries are not served';

/**
 * Runs a query against the schema's own `Query` fields (the topics it serves), on any transport.
 * They resolve synchronously from the schema itself; a result that would be a promise (a resolver
 * of someone's making) is {@link ASYNC_QUERY_REFUSED} instead of never answered.
 */
export function runSchemaQuery(schema: WirestreamSchema, operation: CompiledQuery): ExecutionResult | typeof ASYNC_QUERY_REFUSED {
  const result = execute({
    schema: schema.schema,
    document: operation.document,
    rootValue: { topics: schema.topics },
    variableValues: operation.variables,
    operationName: operation.operationName,
  });
  return 'then' in result ? ASYNC_QUERY_REFUSED : result;
}
