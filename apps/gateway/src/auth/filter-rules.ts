/**
 * The rules of `GATEWAY_JWT_FILTER_RULES` (decision 0025) as the authenticator reads them, and the
 * token's values for them; core/operations/where-bound.ts turns them into filters.
 */
import { HEADERS_FILTER, KEY_FILTER } from '@wirestream/schema';

/** A claim value a rule compares: text, a number or a boolean. */
export type ClaimValue = string | number | boolean;

/** The setting that holds the rules: messages name it. */
export const FILTER_RULES_SETTING = 'GATEWAY_JWT_FILTER_RULES';

/** One rule as configured: on `fieldName` (every field when absent), `path` must equal the `claim`'s value (one of them, for an array). */
export interface FilterRule {
  /** The rule as written, for messages. */
  readonly text: string;
  readonly fieldName?: string | undefined;
  /** Payload path (`listing.seller_info.seller_id`), or `_key`, or `_headers.<Kafka header>`. */
  readonly path: readonly string[];
  /** Claim name; a dotted name is looked up as written first, then as a path into nested claims. */
  readonly claim: string;
}

/** A rule with the caller's values: undefined when the token lacks the claim (a subscription the rule applies to is refused). */
export interface BoundFilter {
  readonly rule: FilterRule;
  readonly values: readonly ClaimValue[] | undefined;
}

const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

/**
 * Parses `[<field>:]<path>=<claim>` entries (the comma-separated setting, already split). Throws a
 * TypeError naming the setting and the entry on the first bad one.
 */
export function parseFilterRules(entries: readonly string[]): readonly FilterRule[] {
  return entries.map((entry) => {
    const text = entry.trim();
    const fail = (why: string): never => {
      throw new TypeError(
        `${FILTER_RULES_SETTING}: ${JSON.stringify(text)} ${why}; each rule is [<subscription field>:]<payload path>=<claim>, e.g. listing.seller_info.seller_id=partner_id or bidPlaced:_headers.tenant=tenant`,
      );
    };
    const equals = text.indexOf('=');
    if (equals < 0) return fail('has no =');
    const left = text.slice(0, equals).trim();
    const claim = text.slice(equals + 1).trim();
    if (claim === '' || /\s|=/.test(claim)) return fail('needs one claim name after =');
    const colon = left.indexOf(':');
    const fieldName = colon < 0 ? undefined : left.slice(0, colon).trim();
    if (fieldName !== undefined && !NAME.test(fieldName)) return fail(`names the field ${JSON.stringify(fieldName)}, which is not a GraphQL name`);
    const pathText = colon < 0 ? left : left.slice(colon + 1).trim();
    const path = pathText.startsWith(`${HEADERS_FILTER}.`) ? [HEADERS_FILTER, pathText.slice(HEADERS_FILTER.length + 1)] : pathText.split('.');
    if (path[0] === HEADERS_FILTER ? path[1] === '' : !path.every((segment) => NAME.test(segment))) return fail('needs a payload path of field names joined by dots');
    if (path[0] === KEY_FILTER && path.length > 1) return fail(`has a path below ${KEY_FILTER}, the Kafka key (a string)`);
    return { text, fieldName, path, claim };
  });
}
