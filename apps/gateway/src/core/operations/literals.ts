/**
 * Literals out of the document text before the document cache (issue 37), as persisted-operation
 * systems do: `subscription { listingUpdated(listing_id: "lst-004217") { … } }` from 10,000 clients,
 * each its own key, is one document `subscription ( $literal0 : ID ) { listingUpdated ( listing_id :
 * $literal0 ) { … } }` parsed and validated once, and 10,000 values of `$literal0`.
 *
 * Only what cannot change an answer is moved, so that the compiled operation (dedup key, filter,
 * channels, pin) and every error stay what they were for the text as sent:
 * - the document is one subscription (no variables of its own: no `$` anywhere, no fragment
 *   definitions, no directives on the operation) that selects exactly one root field;
 * - only that field's arguments move, and only a string or block string literal for a `String` or
 *   `ID` argument, or an integer literal for an `ID` argument or an `Int` one within 32 bits: each is
 *   valid where it stands, and the variable has the argument's own type, so validation has nothing
 *   else to say about it; an argument named twice leaves the text as it is;
 * - anything else (enums, lists, objects such as `where`, floats, booleans, null, custom scalars,
 *   fragments, aliases of several fields, text that does not lex) is left on the exact-text path.
 * The compiler also keeps invalid documents on that path: when the normalized text does not parse
 * or validate, the text as sent is parsed and validated and its errors are the answer.
 *
 * The normalized text is the document's tokens joined by one space, so whitespace, commas and
 * comments do not make two entries either. It has as many tokens as the original plus those the
 * variables add; the original's count is bounded here by the parser's own limit.
 */
import { GraphQLID, GraphQLInt, GraphQLString, Lexer, Source, TokenKind, getNullableType, type GraphQLArgument, type GraphQLInputType, type Token } from 'graphql';
import type { WirestreamSchema } from '@wirestream/schema';

/** A document whose root-field literals moved into variables. */
export interface NormalizedLiterals {
  /** The normalized document text: the cache key of its parse and validation. */
  readonly text: string;
  /** The variables standing for the literals, by name (`literal0`, `literal1`…), with the literals' values. */
  readonly values: Readonly<Record<string, string | number>>;
  /** Their names, in order (one shared array per count). */
  readonly names: readonly string[];
}

const INT_MIN = -2_147_483_648;
const INT_MAX = 2_147_483_647;
/** Names by count, shared by every operation with as many moved literals. */
const namesByCount: (readonly string[])[] = [];

function literalNames(count: number): readonly string[] {
  return (namesByCount[count] ??= Object.freeze(Array.from({ length: count }, (_, i) => `literal${i}`)));
}

/**
 * The document with its root field's movable literals as variables, or undefined when it has none,
 * when it is not a plain single-field subscription, or when its text does not lex within `maxTokens`
 * tokens (the exact-text path then answers, errors included).
 */
export function normalizeLiterals(ws: WirestreamSchema, query: string, maxTokens: number): NormalizedLiterals | undefined {
  const tokens = lexAll(query, maxTokens);
  if (tokens === undefined) return undefined;
  // subscription [Name] { [alias :] field ( args ) …
  let at = 0;
  if (tokens[at]?.kind !== TokenKind.NAME || tokens[at]?.value !== 'subscription') return undefined;
  const head = tokens[at + 1]?.kind === TokenKind.NAME ? at + 2 : at + 1;
  if (tokens[head]?.kind !== TokenKind.BRACE_L) return undefined;
  at = head + 1;
  if (tokens[at]?.kind !== TokenKind.NAME) return undefined;
  if (tokens[at + 1]?.kind === TokenKind.COLON) at += 2;
  const fieldToken = tokens[at];
  if (fieldToken?.kind !== TokenKind.NAME) return undefined;
  const field = ws.schema.getSubscriptionType()?.getFields()[fieldToken.value];
  if (field === undefined || tokens[at + 1]?.kind !== TokenKind.PAREN_L) return undefined;
  at += 2;

  const out: string[] = tokens.slice(0, at).map((token) => raw(query, token));
  const values: Record<string, string | number> = {};
  const definitions: string[] = [];
  const seen = new Set<string>();
  // The arguments: `name : value`, a value being one token or a bracketed group.
  while (tokens[at]?.kind !== TokenKind.PAREN_R) {
    const name = tokens[at];
    if (name?.kind !== TokenKind.NAME || tokens[at + 1]?.kind !== TokenKind.COLON || seen.has(name.value)) return undefined;
    seen.add(name.value);
    out.push(name.value, ':');
    at += 2;
    const value = tokens[at];
    if (value === undefined) return undefined;
    const arg = field.args.find((candidate) => candidate.name === name.value);
    const moved = arg === undefined ? undefined : movable(arg, value);
    if (moved !== undefined) {
      const variable = `literal${definitions.length}`;
      values[variable] = moved.value;
      definitions.push(`$${variable} : ${String(moved.type)}`);
      out.push(`$${variable}`);
      at++;
    } else {
      const end = endOfValue(tokens, at);
      if (end === undefined) return undefined;
      for (; at < end; at++) out.push(raw(query, tokens[at] as Token));
    }
  }
  if (definitions.length === 0) return undefined;
  out.push(')');
  at++;
  // The rest: directives of the root field and its selection set, then the operation's end.
  let braces = 1;
  let parens = 0;
  for (; at < tokens.length; at++) {
    const token = tokens[at] as Token;
    if (braces === 1 && parens === 0) {
      // At the root selection set's level only the field's directives may follow: another field or a spread is not ours.
      if (token.kind === TokenKind.NAME ? tokens[at - 1]?.kind !== TokenKind.AT : token.kind === TokenKind.SPREAD) return undefined;
    }
    if (token.kind === TokenKind.BRACE_L) braces++;
    else if (token.kind === TokenKind.BRACE_R && --braces === 0 && at !== tokens.length - 1) return undefined;
    else if (token.kind === TokenKind.PAREN_L) parens++;
    else if (token.kind === TokenKind.PAREN_R) parens--;
    out.push(raw(query, token));
  }
  if (braces !== 0) return undefined;
  out.splice(head, 0, `( ${definitions.join(' ')} )`);
  return { text: out.join(' '), values, names: literalNames(definitions.length) };
}

/** Every token of the text (comments, commas and whitespace are not tokens), or undefined when it does not lex, has a `$`, or has more than `maxTokens`. */
function lexAll(query: string, maxTokens: number): Token[] | undefined {
  const tokens: Token[] = [];
  try {
    const lexer = new Lexer(new Source(query));
    for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
      if (token.kind === TokenKind.DOLLAR || tokens.length === maxTokens) return undefined;
      tokens.push(token);
    }
  } catch {
    return undefined; // the parser reports it, from the text as sent
  }
  return tokens;
}

/** The value a literal stands for, when moving it into a variable of the argument's type changes nothing. */
function movable(arg: GraphQLArgument, token: Token): { readonly value: string | number; readonly type: GraphQLInputType } | undefined {
  const { type } = arg;
  const named = getNullableType(type);
  if (token.kind === TokenKind.STRING || token.kind === TokenKind.BLOCK_STRING) {
    return named === GraphQLString || named === GraphQLID ? { value: ownCopy(token.value), type } : undefined;
  }
  if (token.kind !== TokenKind.INT) return undefined;
  // An ID literal keeps its digits as text; an Int one is a number, refused outside 32 bits by validation.
  if (named === GraphQLID) return { value: ownCopy(token.value), type };
  const n = Number.parseInt(token.value, 10);
  return named === GraphQLInt && n >= INT_MIN && n <= INT_MAX ? { value: n, type } : undefined;
}

/**
 * The text as a string of its own. The lexer's values are slices of the request text, and V8 keeps a
 * slice of 13 characters or more as a view of its parent: an operation holding the value (its filter,
 * pin, variables) would hold the whole request text. On the exact-text path that text is the cache's
 * key anyway; here it is garbage once compiled.
 */
function ownCopy(value: string): string {
  return value.length < 13 ? value : (JSON.parse(JSON.stringify(value)) as string);
}

/** The index after the value starting at `at` (one token, or a list or object to its matching bracket). */
function endOfValue(tokens: readonly Token[], at: number): number | undefined {
  const first = tokens[at];
  if (first === undefined) return undefined;
  if (first.kind !== TokenKind.BRACKET_L && first.kind !== TokenKind.BRACE_L) return at + 1;
  let depth = 0;
  for (let i = at; i < tokens.length; i++) {
    const kind = (tokens[i] as Token).kind;
    if (kind === TokenKind.BRACKET_L || kind === TokenKind.BRACE_L) depth++;
    else if ((kind === TokenKind.BRACKET_R || kind === TokenKind.BRACE_R) && --depth === 0) return i + 1;
  }
  return undefined;
}

/** A token as written (a string with its quotes and escapes). */
function raw(query: string, token: Token): string {
  return query.slice(token.start, token.end);
}
