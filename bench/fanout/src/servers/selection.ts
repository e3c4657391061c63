/**
 * What a bare server hand-rolls to answer each distinct operation: the operation's selection set
 * (from `graphql`'s parse) turned into a picker that copies the selected fields of a parsed event,
 * fields and aliases only. No fragments, directives, arguments or type checks: the sweep's
 * operations have none, and a bare server would not pay for them. Not a product.
 */
import { Kind, parse, type OperationDefinitionNode, type SelectionSetNode } from 'graphql';

/** One selected field: the key it is written under, the source field, and its own selection when it has one. */
interface Pick {
  readonly key: string;
  readonly field: string;
  readonly children: readonly Pick[] | undefined;
}

/** An operation as a bare server keeps it: its root field and how to pick the rest of an event. */
export interface PickedOperation {
  /** The Subscription field it asks for (routing), e.g. `listingUpdated`. */
  readonly rootField: string;
  /** The key the root field is written under in `data` (its alias, or its name). */
  readonly responseKey: string;
  /** The selected fields of `payload` (the event the root field resolves to), in selection order. */
  pick(payload: unknown): unknown;
}

/**
 * Compiles a subscribe request's query into a picker.
 * @throws Error naming what it does not handle (fragments, several root fields, no such operation).
 */
export function compileSelection(query: string, operationName?: string | null): PickedOperation {
  const document = parse(query, { noLocation: true });
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const operation = operationName ? operations.find((o) => o.name?.value === operationName) : operations.length === 1 ? operations[0] : undefined;
  if (!operation) throw new Error(operationName ? `no operation named ${operationName}` : 'give operationName: the document has several operations');
  const [root, ...more] = picksOf(operation.selectionSet);
  if (!root || more.length > 0) throw new Error('a subscription selects exactly one root field');
  const children = root.children;
  return {
    rootField: root.field,
    responseKey: root.key,
    pick: (payload) => (children === undefined ? payload : pickValue(payload, children)),
  };
}

function picksOf(set: SelectionSetNode): Pick[] {
  return set.selections.map((s) => {
    if (s.kind !== Kind.FIELD) throw new Error('fragments are not handled by the bare projector');
    return { key: s.alias?.value ?? s.name.value, field: s.name.value, children: s.selectionSet ? picksOf(s.selectionSet) : undefined };
  });
}

/** The selected fields of an object, the same per element of a list; null (or missing) stays null. */
function pickValue(value: unknown, picks: readonly Pick[]): unknown {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map((item: unknown) => pickValue(item, picks));
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const p of picks) {
    const v = source[p.field];
    out[p.key] = p.children === undefined ? (v ?? null) : pickValue(v, p.children);
  }
  return out;
}
