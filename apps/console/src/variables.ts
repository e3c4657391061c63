import { GraphQLError, Kind, parse, type OperationDefinitionNode } from 'graphql';

/** What the variables box holds once checked against the document, or why it cannot be sent. */
export type CheckedVariables = { readonly variables: Record<string, unknown> | undefined } | { readonly error: string };

/**
 * The variables box, checked against the subscription document: empty means no variables;
 * anything else must be a JSON object whose every key the operation declares. GraphQL itself
 * ignores an undeclared variable, which made a box the document did not use change nothing; here
 * it is an error that says what to declare. A document that does not parse is left to the gateway,
 * whose error names the line.
 */
export function checkVariables(query: string, text: string): CheckedVariables {
  if (text.trim() === '') return { variables: undefined };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { error: `variables are not JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { error: 'variables must be a JSON object, e.g. {"listing_id": "lst-000003"}' };
  }
  const variables = value as Record<string, unknown>;
  const declared = declaredVariables(query);
  if (declared === undefined) return { variables };
  const undeclared = Object.keys(variables).filter((name) => !declared.includes(name));
  if (undeclared.length === 0) return { variables };
  const list = undeclared.map((name) => `$${name}`).join(', ');
  const has = declared.length > 0 ? `it declares ${declared.map((name) => `$${name}`).join(', ')}` : 'it declares none';
  return { error: `the document does not declare ${list} (${has}): declare it, e.g. subscription ($${undeclared[0]}: ID), and pass it as an argument` };
}

/** The variable names the document's (first) operation declares, or undefined when it does not parse. */
function declaredVariables(query: string): readonly string[] | undefined {
  let operation: OperationDefinitionNode | undefined;
  try {
    operation = parse(query).definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  } catch (err) {
    if (err instanceof GraphQLError) return undefined;
    throw err;
  }
  return operation?.variableDefinitions?.map((v) => v.variable.name.value) ?? [];
}
