import { defaultFieldResolver, getNullableType, isListType, type GraphQLFieldResolver, type GraphQLOutputType } from 'graphql';

/**
 * An integer a double cannot hold, as decodeEnvelope keeps it: a raw JSON value holding its digits
 * (`JSON.rawJSON`, Node 21+; not in TypeScript's lib yet). The projector writes its digits, text
 * filters (IDs) compare them.
 */
export interface RawJson {
  readonly rawJSON: string;
}

const RAW = JSON as unknown as { isRawJSON(value: unknown): boolean; rawJSON(text: string): unknown };

export function isRawJson(value: unknown): value is RawJson {
  return RAW.isRawJSON(value);
}

/** The raw JSON value of `text` (valid JSON of a primitive). */
export function rawJson(text: string): RawJson {
  return RAW.rawJSON(text) as RawJson;
}

/**
 * graphql-js's default field resolver, for an operation the projector declines (execute renders it):
 * a raw integer under `ID` or `String` becomes its digits, under `Float` its nearest double, as the
 * projector writes them; a custom scalar (`Long`) keeps it, and the result's JSON.stringify writes
 * its digits; `Int` gets it as it is and reports the error a 64-bit value is there.
 */
export const rawJsonFieldResolver: GraphQLFieldResolver<unknown, unknown> = (source, args, context, info) => {
  const value: unknown = defaultFieldResolver(source, args, context, info);
  return typeof value === 'object' && value !== null ? leafOfRaw(value, info.returnType) : value;
};

function leafOfRaw(value: object, type: GraphQLOutputType): unknown {
  const nullable = getNullableType(type);
  if (isListType(nullable)) return Array.isArray(value) ? value.map((item: unknown) => (typeof item === 'object' && item !== null ? leafOfRaw(item, nullable.ofType) : item)) : value;
  if (!isRawJson(value)) return value;
  switch ((nullable as { readonly name: string }).name) {
    case 'ID':
    case 'String':
      return value.rawJSON;
    case 'Float':
      return Number(value.rawJSON);
    default:
      return value;
  }
}
