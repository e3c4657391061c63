/**
 * The document cache: each distinct document text parsed (without locations) and validated once,
 * bounded (Map order = recency, a cheap LRU) and keeping errors too, so a client repeating an invalid
 * document costs one Map lookup. A subscription's root-field literals are moved into variables
 * first (literals.ts): texts that differ only in them share one entry.
 */
import { GraphQLError, parse, print, validate, visit, type DocumentNode, type GraphQLFormattedError } from 'graphql';
import { WHERE_ARGUMENT, type WirestreamSchema } from '@wirestream/schema';
import { checkDocumentLimits, checkDocumentNesting, type DocumentLimits } from './document-limits.js';
import { normalizeLiterals, type NormalizedLiterals } from './literals.js';

/** A text's parse and validation: the document, or the errors to answer. */
export interface ParsedDocument {
  readonly document?: DocumentNode;
  readonly errors?: readonly GraphQLFormattedError[];
  /** Normalized text (printed AST), the document part of the dedup key. */
  readonly normalized?: string;
  /**
   * The document part of the dedup key and the projector's key: the printed AST without the root
   * fields' arguments (their coerced values and the `where`'s normalized tree stand in for them) and
   * without the variables only they used.
   */
  readonly keyText?: string;
  /** Variables the document uses outside its root fields' arguments: their values are part of the dedup key. */
  readonly keyVariables?: readonly string[];
}

export interface DocumentCacheOptions {
  readonly maxCachedDocuments: number;
  readonly maxTokens: number;
  readonly maxQueryLength: number;
  readonly limits: Readonly<Required<DocumentLimits>>;
  /** Move root-field literals into variables first (literals.ts). */
  readonly normalizeLiterals: boolean;
}

export interface DocumentCache {
  /**
   * The parsed document of a request: its text's, or that of its text with the root field's literals
   * moved into variables (`literals`: their values), which thousands of texts that differ only in
   * those share. A text normalized is not cached itself; one whose normalized form is invalid is
   * answered (and cached) as sent, so every error is the one the text as sent gets.
   */
  documentOf(query: string): { readonly parsed: ParsedDocument; readonly literals?: NormalizedLiterals };
  /** Texts cached now. */
  readonly size: number;
  /** Requests answered from the cache, and texts parsed and validated, since start. */
  readonly hits: number;
  readonly misses: number;
}

export function createDocumentCache(ws: WirestreamSchema, options: DocumentCacheOptions): DocumentCache {
  const { maxCachedDocuments, maxTokens, maxQueryLength, limits, normalizeLiterals: normalize } = options;
  const cache = new Map<string, ParsedDocument>();
  let hits = 0;
  let misses = 0;

  /** A cached parse, moved to the most recent end. */
  function recall(text: string): ParsedDocument | undefined {
    const cached = cache.get(text);
    if (cached === undefined) return undefined;
    cache.delete(text);
    cache.set(text, cached);
    hits++;
    return cached;
  }

  /** Parses and validates a text and caches the outcome (errors too; oversized texts are not cached). */
  function parseAndValidate(text: string): ParsedDocument {
    misses++;
    const entry = parseEntry(text);
    // Oversized texts are not cached: the cache must stay bounded in bytes, not just entries.
    if (text.length <= maxQueryLength) {
      cache.set(text, entry);
      if (cache.size > maxCachedDocuments) {
        const oldest = cache.keys().next().value;
        if (oldest !== undefined) cache.delete(oldest);
      }
    }
    return entry;
  }

  function parseEntry(query: string): ParsedDocument {
    if (query.length > maxQueryLength) {
      return { errors: [{ message: `Document is ${query.length} characters, over the limit of ${maxQueryLength}.` }] };
    }
    // Cheapest refusals first; validate() only ever sees documents within every bound, so its
    // cost stays linear (no 10,000-alias overlap checks, no parser stack overflow at depth 2,400).
    const nesting = checkDocumentNesting(query, limits);
    if (nesting.length > 0) return { errors: nesting };
    try {
      const document = parse(query, { noLocation: true, maxLexicalTokens: maxTokens });
      const shape = checkDocumentLimits(document, limits);
      const errors = shape.length > 0 ? shape : validate(ws.schema, document).map((e) => e.toJSON());
      return errors.length > 0 ? { errors } : { document, normalized: print(document), ...withoutRootArguments(document) };
    } catch (err) {
      return { errors: [toFormatted(err)] };
    }
  }

  return {
    documentOf(query) {
      const cached = recall(query);
      if (cached !== undefined) return { parsed: cached };
      const literals = normalize && query.length <= maxQueryLength ? normalizeLiterals(ws, query, maxTokens) : undefined;
      if (literals !== undefined) {
        const template = recall(literals.text) ?? parseAndValidate(literals.text);
        if (template.document !== undefined) return { parsed: template, literals };
      }
      return { parsed: parseAndValidate(query) };
    },
    get size() {
      return cache.size;
    },
    get hits() {
      return hits;
    },
    get misses() {
      return misses;
    },
  };
}

/**
 * The document without the arguments of its operations' root fields (and the `where` of a root field
 * in a fragment), printed, and the variables it still uses. The arguments are in the dedup key as
 * their coerced values (and `where` as its normalized tree), so two operations that differ only in
 * how they write equal arguments (a literal or a variable, keys or `in` values in another order) get
 * one dedup key; and operations that differ only in their root field's arguments (each client its
 * own key: unicast) share one projector, which never reads them (decision 0039).
 */
function withoutRootArguments(document: DocumentNode): { readonly keyText: string; readonly keyVariables: readonly string[] } {
  let depth = 0;
  let inOperation = false;
  const stripped = visit(document, {
    OperationDefinition: {
      enter() {
        inOperation = true;
      },
      leave() {
        inOperation = false;
      },
    },
    SelectionSet: {
      enter() {
        depth++;
      },
      leave() {
        depth--;
      },
    },
    Field(node) {
      // Only an operation's own root field: a fragment's depth-1 fields may be of any type.
      return inOperation && depth === 1 && node.arguments !== undefined && node.arguments.length > 0 ? { ...node, arguments: [] } : undefined;
    },
    Argument(node) {
      // Depth 1: an argument of a field directly in an operation's selection set (its root field).
      return depth === 1 && node.name.value === WHERE_ARGUMENT ? null : undefined;
    },
  });
  const used = new Set<string>();
  visit(stripped, {
    VariableDefinition: () => false,
    Variable(node) {
      used.add(node.name.value);
    },
  });
  const unused = visit(stripped, {
    VariableDefinition(node) {
      return used.has(node.variable.name.value) ? undefined : null;
    },
  });
  return { keyText: print(unused), keyVariables: [...used].sort() };
}

/** A thrown value as a GraphQL error to answer. */
export function toFormatted(err: unknown): GraphQLFormattedError {
  if (err instanceof GraphQLError) return err.toJSON();
  return { message: err instanceof Error ? err.message : String(err) };
}
