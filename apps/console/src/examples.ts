import { getNamedType, isEnumType, isNonNullType, isObjectType, isScalarType, Kind, type FieldDefinitionNode, type GraphQLObjectType, type GraphQLSchema } from 'graphql';

/** One ready-to-run subscription per `Subscription` field, for the playground tabs and the live view. */
export interface SubscriptionExample {
  /** The subscription field, e.g. `bidPlaced`. */
  readonly field: string;
  /** The field's description from the SDL, or `''`. */
  readonly description: string;
  /** A complete document: `subscription BidPlaced($listing_id: ID) { bidPlaced(listing_id: $listing_id) { … } }`. */
  readonly query: string;
  /** The document's variables (one per argument of the root field), for the variables box's hint. */
  readonly variables: readonly string[];
  /** The Kafka topic of the field's `@topic` and its value format (`JSON` unless the SDL says `AVRO`, `PROTOBUF`, `JSON_SCHEMA`); undefined without `@topic`. */
  readonly topic: { readonly name: string; readonly format: string; readonly keyFormat: string } | undefined;
}

export interface ExampleOptions {
  /** Object levels below the root field that are expanded; deeper objects are left out. @default 2 */
  readonly maxDepth?: number;
  /** Leaf fields per document, so an example stays readable and far below GATEWAY_MAX_FIELDS. @default 40 */
  readonly maxLeaves?: number;
}

/**
 * Builds one example per subscription field: every scalar and enum field, and the scalars of
 * nested objects down to `maxDepth`. Every argument of the root field becomes a variable of the same
 * name (unset, an optional one filters nothing), so the variables box works on the example as it is;
 * nested fields with required arguments are skipped. Objects whose selection would end up empty are left out, so the document is valid.
 */
export function subscriptionExamples(schema: GraphQLSchema, options: ExampleOptions = {}): SubscriptionExample[] {
  const {
    maxDepth = 2,
    maxLeaves = 40,
  } = options;
  const root = schema.getSubscriptionType();
  if (!root) return [];
  return Object.values(root.getFields()).map((field) => {
    const budget = { leaves: maxLeaves };
    const type = getNamedType(field.type);
    // An object with nothing selectable at this depth still needs a selection to be valid.
    const selection = isObjectType(type) ? selectionOf(type, 0, maxDepth, budget, '  ') || '    __typename\n' : '';
    const name = field.name.charAt(0).toUpperCase() + field.name.slice(1);
    // Arguments of the root field become variables (filled in the variables box).
    const declared = field.args.length > 0 ? `(${field.args.map((arg) => `$${arg.name}: ${arg.type.toString()}`).join(', ')})` : '';
    const args = field.args.length > 0 ? `(${field.args.map((arg) => `${arg.name}: $${arg.name}`).join(', ')})` : '';
    return {
      field: field.name,
      description: field.description ?? '',
      query: `subscription ${name}${declared} {\n  ${field.name}${args}${selection ? ` {\n${selection}  }` : ''}\n}\n`,
      variables: field.args.map((arg) => arg.name),
      topic: topicOf(field.astNode),
    };
  });
}

/** The `@topic(name:, format:, keyFormat:)` of a subscription field as the SDL writes it (defaults as the directive declares them). */
function topicOf(node: FieldDefinitionNode | null | undefined): SubscriptionExample['topic'] {
  const directive = node?.directives?.find((d) => d.name.value === 'topic');
  if (!directive) return undefined;
  const arg = (name: string): string | undefined => {
    const value = directive.arguments?.find((a) => a.name.value === name)?.value;
    return value?.kind === Kind.STRING || value?.kind === Kind.ENUM ? value.value : undefined;
  };
  const name = arg('name');
  return name === undefined ? undefined : { name, format: arg('format') ?? 'JSON', keyFormat: arg('keyFormat') ?? 'STRING' };
}

function selectionOf(type: GraphQLObjectType, depth: number, maxDepth: number, budget: { leaves: number }, indent: string): string {
  const pad = `${indent}  `;
  let lines = '';
  for (const field of Object.values(type.getFields())) {
    if (budget.leaves <= 0) break;
    if (field.args.some((arg) => isNonNullType(arg.type) && arg.defaultValue === undefined)) continue;
    const named = getNamedType(field.type);
    if (isScalarType(named) || isEnumType(named)) {
      lines += `${pad}${field.name}\n`;
      budget.leaves--;
    } else if (isObjectType(named) && depth < maxDepth) {
      const inner = selectionOf(named, depth + 1, maxDepth, budget, pad);
      if (inner) lines += `${pad}${field.name} {\n${inner}${pad}}\n`;
    }
  }
  return lines;
}
