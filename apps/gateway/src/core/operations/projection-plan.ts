/**
 * A compiled operation's plan (projector.ts compiles it): how to write each value of its `data`,
 * read by the generated JavaScript writer and by the WebAssembly byte plan (byte-plan.ts).
 */
import type { GraphQLLeafType } from 'graphql';

// Plan kinds. Numbers, not strings, so the per-value switch is a jump table.
export const STRING = 0;
export const INT = 1;
export const FLOAT = 2;
export const BOOLEAN = 3;
export const ID = 4;
/** An enum or a custom scalar: its own `serialize` decides (exactly what `completeLeafValue` does). */
export const OTHER_LEAF = 5;
export const OBJECT = 6;
export const LIST = 7;
export const TYPENAME = 8;

/** How to write one value. One shape for every kind, so the writer's property loads stay monomorphic. */
export interface ValuePlan {
  readonly kind: number;
  readonly nonNull: boolean;
  /** OTHER_LEAF: the type whose `serialize` is called. */
  readonly leaf: GraphQLLeafType | undefined;
  /** OBJECT: its fields, in response order. */
  readonly fields: readonly FieldPlan[];
  /** LIST: how to write each item. */
  readonly item: ValuePlan | undefined;
  /** TYPENAME: the type name's JSON. */
  readonly constant: string;
}

export interface FieldPlan {
  /** `"key":`, with a leading comma for every field but the first. */
  readonly prefix: string;
  /** The payload property the default resolver reads (the field's name, not its alias). */
  readonly prop: string;
  readonly value: ValuePlan;
}
