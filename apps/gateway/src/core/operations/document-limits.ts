import {
  Kind,
  type DirectiveNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLFormattedError,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { GATEWAY_DEFAULTS } from '../../defaults.js';

/**
 * Bounds on one GraphQL document, checked on the parsed AST **before** `validate()`.
 *
 * Why before: graphql-js validation is not linear in every rule. OverlappingFieldsCanBeMerged
 * compares fields that share a response name pairwise, and fragment spreads are expanded
 * wherever they are used, so a small text can cost seconds and gigabytes (a Go server spent
 * 65 s and 10 GB on one request of 10,000 aliased fields; graphql-js had CVE-2023-26144). The
 * parser's `maxTokens` bounds the text; these limits bound what the text *expands to*.
 *
 * Order per distinct document text (cache the outcome, errors included):
 * length limit → {@link checkDocumentNesting}(text) → `parse(text, { noLocation: true, maxTokens })`
 * → {@link checkDocumentLimits}(document) → `validate()`. bench/validation measures each step.
 *
 * Defaults are sized from the example auction schema, with headroom: its deepest useful
 * selection is 5 fields deep (`listingUpdated.listing.seller_info.address.city`) and selecting
 * every field of a `ListingEvent` takes about 40 selections.
 */
export interface DocumentLimits {
  /**
   * Nesting of fields (fragments and inline fragments add no level; the root field is depth 1).
   * The schema's deepest path is 5, so 10 leaves 2× headroom while keeping recursive
   * validation and execution shallow.
   * @default GATEWAY_DEFAULTS.maxDepth (10)
   */
  readonly maxDepth?: number;
  /**
   * Aliased fields, counted once per use (a fragment spread twice counts twice). Aliases are how
   * one document asks for the same field thousands of times; legitimate subscriptions need a few.
   * @default GATEWAY_DEFAULTS.maxAliases (30)
   */
  readonly maxAliases?: number;
  /**
   * Selections (fields, inline fragments and fragment spreads) after expanding fragments: each
   * spread adds the whole cost of its fragment, so a "fragment bomb" (F2 spreads F1 twice, F3
   * spreads F2 twice…) is measured at its expanded size. A full `ListingEvent` is ~40, so 200
   * allows 5 of them (or one with generous `__typename`s).
   * @default GATEWAY_DEFAULTS.maxFields (200)
   */
  readonly maxFields?: number;
  /**
   * Directive uses (`@include`, `@skip`, …), counted through fragment expansion. Each one is
   * validated and evaluated; a client needs a handful.
   * @default GATEWAY_DEFAULTS.maxDirectives (20)
   */
  readonly maxDirectives?: number;
  /**
   * Allow `__schema` and `__type` (introspection). Off for a public endpoint: the schema is
   * published as a file, and introspection is the most common probe and the largest response.
   * `__typename` is always allowed (clients such as Apollo add it everywhere).
   * @default GATEWAY_DEFAULTS.allowIntrospection (false)
   */
  readonly allowIntrospection?: boolean;
  /**
   * Bracket nesting (`{`, `[`, `(`) in the document **text**, checked by
   * {@link checkDocumentNesting} before parsing. graphql-js parses recursively: a deeply nested
   * text costs milliseconds to refuse even with `maxTokens` (unwinding ~1,000 levels of parser
   * recursion), and overflows the stack near depth 2,000 without it. 32 covers `maxDepth`
   * selection levels plus nested input values in arguments.
   * @default GATEWAY_DEFAULTS.maxNesting (32)
   */
  readonly maxNesting?: number;
  /**
   * Clauses of one `where` filter: each comparison operator, `and`, `or` and `not` counts one.
   * The filter is compiled once per distinct operation, but evaluated per event.
   * @default GATEWAY_DEFAULTS.maxFilterClauses (64)
   */
  readonly maxFilterClauses?: number;
  /**
   * Nesting of one `where` filter: the filter is 1; each nested object, `and`/`or` item and `not` adds one.
   * @default GATEWAY_DEFAULTS.maxFilterDepth (8)
   */
  readonly maxFilterDepth?: number;
  /**
   * Values in one `in` or `nin` list of a `where` filter.
   * @default GATEWAY_DEFAULTS.maxFilterInList (100)
   */
  readonly maxFilterInList?: number;
}

/** The limits used when none are given (see {@link DocumentLimits} for the reasons). */
export const DEFAULT_DOCUMENT_LIMITS: Readonly<Required<DocumentLimits>> = Object.freeze({
  maxDepth: GATEWAY_DEFAULTS.maxDepth,
  maxAliases: GATEWAY_DEFAULTS.maxAliases,
  maxFields: GATEWAY_DEFAULTS.maxFields,
  maxDirectives: GATEWAY_DEFAULTS.maxDirectives,
  allowIntrospection: GATEWAY_DEFAULTS.allowIntrospection,
  maxNesting: GATEWAY_DEFAULTS.maxNesting,
  maxFilterClauses: GATEWAY_DEFAULTS.maxFilterClauses,
  maxFilterDepth: GATEWAY_DEFAULTS.maxFilterDepth,
  maxFilterInList: GATEWAY_DEFAULTS.maxFilterInList,
});

/**
 * Fills in defaults and fails fast on a limit that is not a positive integer, naming it.
 * Call once at start-up; pass the result to {@link checkDocumentLimits}.
 */
export function resolveDocumentLimits(limits: DocumentLimits = {}): Readonly<Required<DocumentLimits>> {
  const {
    maxDepth = DEFAULT_DOCUMENT_LIMITS.maxDepth,
    maxAliases = DEFAULT_DOCUMENT_LIMITS.maxAliases,
    maxFields = DEFAULT_DOCUMENT_LIMITS.maxFields,
    maxDirectives = DEFAULT_DOCUMENT_LIMITS.maxDirectives,
    allowIntrospection = DEFAULT_DOCUMENT_LIMITS.allowIntrospection,
    maxNesting = DEFAULT_DOCUMENT_LIMITS.maxNesting,
    maxFilterClauses = DEFAULT_DOCUMENT_LIMITS.maxFilterClauses,
    maxFilterDepth = DEFAULT_DOCUMENT_LIMITS.maxFilterDepth,
    maxFilterInList = DEFAULT_DOCUMENT_LIMITS.maxFilterInList,
  } = limits;
  // maxAliases and maxDirectives may be 0 (forbid them entirely); a document needs at least one field.
  positiveInteger('maxDepth', maxDepth, 1);
  positiveInteger('maxFields', maxFields, 1);
  positiveInteger('maxAliases', maxAliases, 0);
  positiveInteger('maxDirectives', maxDirectives, 0);
  positiveInteger('maxNesting', maxNesting, 2);
  positiveInteger('maxFilterClauses', maxFilterClauses, 1);
  positiveInteger('maxFilterDepth', maxFilterDepth, 1);
  positiveInteger('maxFilterInList', maxFilterInList, 1);
  return Object.freeze({ maxDepth, maxAliases, maxFields, maxDirectives, allowIntrospection, maxNesting, maxFilterClauses, maxFilterDepth, maxFilterInList });
}

/** What one selection set costs; fragments keep one of these each, computed once (memo). */
interface Cost {
  selections: number;
  aliases: number;
  directives: number;
  /** Deepest field level reached, relative to where the selection set starts. */
  depth: number;
}

/** Thrown inside the walk to unwind at the first exceeded limit; caught in checkDocumentLimits. */
interface Violation {
  readonly violation: GraphQLFormattedError;
}

/**
 * Unwinds the walk. A plain object on purpose: it never leaves this module (checkDocumentLimits
 * catches it), and an Error would capture a stack trace for every refused document.
 */
function unwind(violation: GraphQLFormattedError): never {
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- control flow inside this module, see above
  throw { violation } satisfies Violation;
}

const NO_ERRORS: readonly GraphQLFormattedError[] = Object.freeze([]);

/**
 * Checks one parsed document against `limits`. Returns no errors (a shared empty array) when it
 * is within them, else exactly one error: the first limit found exceeded. Its message names the
 * limit, its value and what was found; `extensions` carry the same as data
 * (`{ code: 'DOCUMENT_LIMIT_EXCEEDED', limit, max, found }`).
 *
 * Cost is linear in the document and stops at the first exceeded limit, so a hostile document is
 * rejected after at most about `maxFields + maxAliases + maxDirectives` steps (plus one pass over
 * the top-level definitions). Because it stops early, `found` is what was counted when a limit
 * was crossed: a lower bound of the document's real size.
 *
 * Fragments: each fragment's cost is computed once and added at every spread, so a fragment that
 * doubles at each level is measured at its expanded size without being expanded. A fragment that
 * spreads itself (directly or not) is rejected here, before validation has to deal with it.
 * Fragments the operation never uses still count once: `validate()` visits them too.
 *
 * Also required: exactly one operation per document (graphql-ws sends one operation per
 * `subscribe`, and the dedup key is per operation), and no introspection unless allowed.
 */
export function checkDocumentLimits(
  document: DocumentNode,
  limits: Readonly<Required<DocumentLimits>> = DEFAULT_DOCUMENT_LIMITS,
): readonly GraphQLFormattedError[] {
  const found = findOperation(document);
  if ('errors' in found) return found.errors;
  const { operation, fragmentsByName, fragmentDefinitions } = found;
  const w: LimitWalk = { limits, fragmentsByName, memo: new Map(), fragmentChain: 0 };
  const total: Cost = { selections: 0, aliases: 0, directives: 0, depth: 0 };
  try {
    countDirectives(w, total, operation.directives);
    if (operation.variableDefinitions) {
      for (const variable of operation.variableDefinitions) countDirectives(w, total, variable.directives);
    }
    walk(w, operation.selectionSet, 0, total);
    // Unused fragments are an error for validate(), but validate() still walks them first.
    if (fragmentDefinitions > w.memo.size) {
      for (const definition of document.definitions) {
        if (definition.kind === Kind.FRAGMENT_DEFINITION && !w.memo.has(definition)) {
          addCost(w, total, fragmentCost(w, definition), 0, definition.name.value);
        }
      }
    }
  } catch (err) {
    if (isViolation(err)) return [err.violation];
    throw err;
  }
  return NO_ERRORS;
}

/** The state of one walk over a document. */
interface LimitWalk {
  readonly limits: Readonly<Required<DocumentLimits>>;
  /** Present only for documents that have fragments: most subscriptions have none. */
  readonly fragmentsByName: Map<string, FragmentDefinitionNode> | undefined;
  /** Fragment costs by definition; `null` marks a fragment being computed (a spread of it now is a cycle). */
  readonly memo: Map<FragmentDefinitionNode, Cost | null>;
  /** Fragments being computed, nested: a chain of spreads, each counted at least once. */
  fragmentChain: number;
}

/** The one operation of the document and its fragments, or the error when it has none or several. */
function findOperation(document: DocumentNode):
  | { readonly operation: OperationDefinitionNode; readonly fragmentsByName: Map<string, FragmentDefinitionNode> | undefined; readonly fragmentDefinitions: number }
  | { readonly errors: readonly GraphQLFormattedError[] } {
  let operation: OperationDefinitionNode | undefined;
  let operations = 0;
  let fragmentsByName: Map<string, FragmentDefinitionNode> | undefined;
  let fragmentDefinitions = 0;
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION) {
      operations++;
      operation ??= definition;
    } else if (definition.kind === Kind.FRAGMENT_DEFINITION) {
      fragmentDefinitions++;
      fragmentsByName ??= new Map();
      // Duplicate names are validate()'s to report; spreads resolve to the first one.
      if (!fragmentsByName.has(definition.name.value)) fragmentsByName.set(definition.name.value, definition);
    }
  }
  if (operations === 1 && operation) return { operation, fragmentsByName, fragmentDefinitions };
  return {
    errors: [
      {
        message:
          operations === 0
            ? 'Document contains no operation: send one subscription (or query) per subscribe message.'
            : `Document must contain exactly one operation, found ${operations}: send one operation per subscribe message.`,
        extensions: { code: 'DOCUMENT_LIMIT_EXCEEDED', limit: 'operations', max: 1, found: operations },
      },
    ],
  };
}

function exceeded(limit: string, max: number, found: number, message: string): never {
  unwind({ message, extensions: { code: 'DOCUMENT_LIMIT_EXCEEDED', limit, max, found } });
}

function addSelections(w: LimitWalk, acc: Cost, n: number): void {
  const { maxFields } = w.limits;
  acc.selections += n;
  if (acc.selections > maxFields) {
    exceeded(
      'maxFields',
      maxFields,
      acc.selections,
      `Document has more than ${maxFields} selections (maxFields, fragments expanded at each spread): counted ${acc.selections}. Split it into smaller operations.`,
    );
  }
}

function addAliases(w: LimitWalk, acc: Cost, n: number): void {
  const { maxAliases } = w.limits;
  acc.aliases += n;
  if (acc.aliases > maxAliases) {
    exceeded('maxAliases', maxAliases, acc.aliases, `Document has more than ${maxAliases} aliases (maxAliases): counted ${acc.aliases}. Use fewer aliases.`);
  }
}

function addDirectives(w: LimitWalk, acc: Cost, n: number): void {
  const { maxDirectives } = w.limits;
  acc.directives += n;
  if (acc.directives > maxDirectives) {
    exceeded(
      'maxDirectives',
      maxDirectives,
      acc.directives,
      `Document has more than ${maxDirectives} directives (maxDirectives): counted ${acc.directives}. Use fewer directives.`,
    );
  }
}

// `kind` and `name` are passed apart so the message is built only when a limit is hit.
function reachDepth(w: LimitWalk, acc: Cost, depth: number, kind: 'field' | 'fragment', name: string): void {
  const { maxDepth } = w.limits;
  if (depth > maxDepth) {
    exceeded(
      'maxDepth',
      maxDepth,
      depth,
      `Document depth exceeds the limit of ${maxDepth} (maxDepth): ${kind} "${name}" reaches depth ${depth}. Select fewer nested levels.`,
    );
  }
  if (depth > acc.depth) acc.depth = depth;
}

function countDirectives(w: LimitWalk, acc: Cost, directives: readonly DirectiveNode[] | undefined): void {
  if (directives !== undefined && directives.length > 0) addDirectives(w, acc, directives.length);
}

// Recursion is bounded: every call first counts at least one selection (so at most maxFields
// calls are open), and field nesting stops at maxDepth.
function walk(w: LimitWalk, selectionSet: SelectionSetNode, depth: number, acc: Cost): void {
  for (const selection of selectionSet.selections) {
    addSelections(w, acc, 1);
    countDirectives(w, acc, selection.directives);
    switch (selection.kind) {
      case Kind.FIELD: {
        const name = selection.name.value;
        reachDepth(w, acc, depth + 1, 'field', name);
        if (selection.alias) addAliases(w, acc, 1);
        if (!w.limits.allowIntrospection && (name === '__schema' || name === '__type')) {
          unwind({
              message: `Introspection is disabled on this endpoint: the document selects "${name}". Use the published schema file instead (__typename stays allowed).`,
              extensions: { code: 'INTROSPECTION_DISABLED', field: name },
            });
        }
        if (selection.selectionSet) walk(w, selection.selectionSet, depth + 1, acc);
        break;
      }
      case Kind.INLINE_FRAGMENT:
        walk(w, selection.selectionSet, depth, acc);
        break;
      case Kind.FRAGMENT_SPREAD: {
        const definition = w.fragmentsByName?.get(selection.name.value);
        // An unknown fragment is validate()'s to report (KnownFragmentNames); it costs nothing here.
        if (definition) addCost(w, acc, fragmentCost(w, definition), depth, definition.name.value);
        break;
      }
    }
  }
}

function addCost(w: LimitWalk, acc: Cost, cost: Cost, depth: number, fragmentName: string): void {
  if (cost.selections > 0) addSelections(w, acc, cost.selections);
  if (cost.aliases > 0) addAliases(w, acc, cost.aliases);
  if (cost.directives > 0) addDirectives(w, acc, cost.directives);
  reachDepth(w, acc, depth + cost.depth, 'fragment', fragmentName);
}

function fragmentCost(w: LimitWalk, definition: FragmentDefinitionNode): Cost {
  const known = w.memo.get(definition);
  if (known) return known;
  if (known === null) {
    unwind({
        message: `Fragment "${definition.name.value}" spreads itself, directly or through other fragments: fragments must not form cycles.`,
        extensions: { code: 'FRAGMENT_CYCLE', fragment: definition.name.value },
      });
  }
  const { maxFields } = w.limits;
  // Each open fragment in the chain is spread at least once by the one above it, so the
  // document has at least this many selections: this bounds the recursion by maxFields too.
  if (++w.fragmentChain > maxFields) {
    exceeded(
      'maxFields',
      maxFields,
      w.fragmentChain,
      `Document has more than ${maxFields} selections (maxFields, fragments expanded at each spread): a chain of ${w.fragmentChain} fragment spreads. Split it into smaller operations.`,
    );
  }
  w.memo.set(definition, null);
  const cost: Cost = { selections: 0, aliases: 0, directives: 0, depth: 0 };
  countDirectives(w, cost, definition.directives);
  walk(w, definition.selectionSet, 0, cost);
  w.memo.set(definition, cost);
  w.fragmentChain--;
  return cost;
}

const OPEN_BRACE = 0x7b; // {
const OPEN_BRACKET = 0x5b; // [
const OPEN_PAREN = 0x28; // (
const CLOSE_BRACE = 0x7d; // }
const CLOSE_BRACKET = 0x5d; // ]
const CLOSE_PAREN = 0x29; // )
const HASH = 0x23; // #
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \
const LINE_FEED = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/**
 * Refuses document text whose brackets nest deeper than `limits.maxNesting`, **before** parsing:
 * one pass over the characters, skipping strings, block strings and comments, stopping at the
 * first level too deep. No allocation for accepted text (a shared empty array).
 *
 * It is a bound, not a parser: malformed text that passes is left to `parse()`. Call it after
 * the length check and before `parse(text, { noLocation: true, maxTokens })`.
 */
export function checkDocumentNesting(
  query: string,
  limits: Readonly<Required<DocumentLimits>> = DEFAULT_DOCUMENT_LIMITS,
): readonly GraphQLFormattedError[] {
  const { maxNesting } = limits;
  const length = query.length;
  let depth = 0;
  // Deliberately a char-code loop: no regex, no substrings, one pass.
  for (let i = 0; i < length; i++) {
    const code = query.charCodeAt(i);
    if (code === OPEN_BRACE || code === OPEN_BRACKET || code === OPEN_PAREN) {
      if (++depth > maxNesting) {
        return [
          {
            message: `Document nests brackets deeper than ${maxNesting} (maxNesting), refused before parsing: select fewer nested levels.`,
            extensions: { code: 'DOCUMENT_LIMIT_EXCEEDED', limit: 'maxNesting', max: maxNesting, found: depth },
          },
        ];
      }
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET || code === CLOSE_PAREN) {
      if (depth > 0) depth--;
    } else if (code === HASH) {
      // Comment: up to the end of the line.
      while (i + 1 < length) {
        const next = query.charCodeAt(i + 1);
        if (next === LINE_FEED || next === CARRIAGE_RETURN) break;
        i++;
      }
    } else if (code === QUOTE) {
      i = query.charCodeAt(i + 1) === QUOTE && query.charCodeAt(i + 2) === QUOTE ? endOfBlockString(query, i + 3) : endOfString(query, i + 1);
    }
  }
  return NO_ERRORS;
}

/** Index of the closing quote of a string whose content starts at `i` (or of the line end / text end). */
function endOfString(query: string, i: number): number {
  for (; i < query.length; i++) {
    const code = query.charCodeAt(i);
    if (code === BACKSLASH) i++;
    else if (code === QUOTE || code === LINE_FEED || code === CARRIAGE_RETURN) return i;
  }
  return i;
}

/** Index of the last quote of the `"""` closing a block string whose content starts at `i`. */
function endOfBlockString(query: string, i: number): number {
  for (; i < query.length; i++) {
    const code = query.charCodeAt(i);
    // `\"""` is an escaped triple quote inside a block string; nothing else is escaped there.
    if (code === BACKSLASH && query.startsWith('"""', i + 1)) i += 3;
    else if (code === QUOTE && query.charCodeAt(i + 1) === QUOTE && query.charCodeAt(i + 2) === QUOTE) return i + 2;
  }
  return i;
}

/**
 * Bounds on the `variables` of a subscribe message, checked before they are coerced.
 * Variables are JSON from the client; graphql-js coerces them recursively, so depth matters as
 * much as size. The auction schema takes only scalar arguments; input objects a few levels deep
 * fit comfortably.
 */
export interface VariablesLimits {
  /** Nesting of objects and arrays; the variables object itself is level 1. @default GATEWAY_DEFAULTS.maxVariablesDepth (8) */
  readonly maxDepth?: number;
  /** Approximate JSON size in bytes (UTF-8 strings, no whitespace). @default GATEWAY_DEFAULTS.maxVariablesBytes (8 KiB) */
  readonly maxBytes?: number;
}

/** Budget carried through the walk: one small object per check, nothing per value. */
interface VariablesBudget {
  remaining: number;
  readonly maxDepth: number;
}

/**
 * Checks that `variables` is a JSON object within `maxDepth` and `maxBytes`, **without**
 * serializing it: it walks the value with a byte budget and stops as soon as the budget or the
 * depth is exceeded, so a huge or deeply nested value costs at most about `maxBytes` steps.
 * `undefined` and `null` mean "no variables" and pass. Returns no errors (a shared empty array)
 * or one error naming the limit.
 */
export function checkVariablesShape(variables: unknown, limits: VariablesLimits = {}): readonly GraphQLFormattedError[] {
  const {
    maxDepth = GATEWAY_DEFAULTS.maxVariablesDepth,
    maxBytes = GATEWAY_DEFAULTS.maxVariablesBytes,
  } = limits;
  if (variables === undefined || variables === null) return NO_ERRORS;
  if (typeof variables !== 'object' || Array.isArray(variables)) {
    return [
      {
        message: `Variables must be a JSON object of name → value, got ${Array.isArray(variables) ? 'an array' : typeof variables}.`,
        extensions: { code: 'BAD_VARIABLES' },
      },
    ];
  }
  const budget: VariablesBudget = { remaining: maxBytes, maxDepth };
  const problem = measure(variables, 1, budget);
  switch (problem) {
    case undefined:
      return NO_ERRORS;
    case 'depth':
      return [
        {
          message: `Variables are nested more than ${maxDepth} levels deep (variables maxDepth). Send flatter input values.`,
          extensions: { code: 'VARIABLES_LIMIT_EXCEEDED', limit: 'maxDepth', max: maxDepth },
        },
      ];
    case 'bytes':
      return [
        {
          message: `Variables are larger than ${maxBytes} bytes as JSON (variables maxBytes). Send smaller input values.`,
          extensions: { code: 'VARIABLES_LIMIT_EXCEEDED', limit: 'maxBytes', max: maxBytes },
        },
      ];
    default:
      return [
        {
          message: `Variables must be JSON values; found a ${problem}.`,
          extensions: { code: 'BAD_VARIABLES' },
        },
      ];
  }
}

/**
 * Charges the JSON size of `value` to the budget. Returns undefined when within limits, else
 * what was exceeded ('depth' | 'bytes') or the JS type that JSON cannot carry. Recursion is
 * bounded by maxDepth; the loop by the byte budget (every element costs at least one byte).
 */
function measure(value: unknown, depth: number, budget: VariablesBudget): string | undefined {
  switch (typeof value) {
    case 'string':
      // UTF-8 is at least one byte per UTF-16 unit: a string longer than the budget fails
      // without counting its bytes.
      if (value.length + 2 > budget.remaining) return 'bytes';
      budget.remaining -= Buffer.byteLength(value, 'utf8') + 2;
      return budget.remaining < 0 ? 'bytes' : undefined;
    case 'number':
      budget.remaining -= Number.isFinite(value) ? String(value).length : 4; // NaN/Infinity print as null
      return budget.remaining < 0 ? 'bytes' : undefined;
    case 'boolean':
      budget.remaining -= 5;
      return budget.remaining < 0 ? 'bytes' : undefined;
    case 'undefined':
      return undefined; // JSON drops it
    case 'object': {
      if (value === null) {
        budget.remaining -= 4;
        return budget.remaining < 0 ? 'bytes' : undefined;
      }
      if (depth > budget.maxDepth) return 'depth';
      budget.remaining -= 2; // brackets
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          budget.remaining -= 1; // comma
          const problem = measure(value[i], depth + 1, budget);
          if (problem !== undefined) return problem;
        }
        return budget.remaining < 0 ? 'bytes' : undefined;
      }
      // for…in walks keys lazily; Object.keys would first copy every key of a huge object.
      for (const key in value) {
        if (key.length + 4 > budget.remaining) return 'bytes';
        budget.remaining -= Buffer.byteLength(key, 'utf8') + 4; // quotes, colon, comma
        const problem = measure((value as Record<string, unknown>)[key], depth + 1, budget);
        if (problem !== undefined) return problem;
      }
      return budget.remaining < 0 ? 'bytes' : undefined;
    }
    default:
      return typeof value; // bigint, symbol, function
  }
}

function isViolation(err: unknown): err is Violation {
  return typeof err === 'object' && err !== null && 'violation' in err;
}

function positiveInteger(name: string, value: number, min: number): void {
  if (!Number.isInteger(value) || value < min) {
    throw new RangeError(`document limit ${name} must be an integer ≥ ${min}, got ${String(value)}`);
  }
}
