/**
 * A collection that is usually one thing: the thing itself until a second one joins, then a Set
 * (issue #37). A group's subscribers (a unicast group has one) and the groups the channel index
 * files under a key (a key has one group) are such: a Set of one costs ~230 bytes of heap (node 24,
 * 8-byte pointers), an array of one ~56, the reference itself nothing. Order is the order they came
 * in (a Set's), as before.
 *
 * The functions are pure: the module that owns a collection assigns what {@link addOne} and
 * {@link removeOne} return (groups.ts owns both kinds). A member is never a Set itself: that is how
 * one is told from many.
 */
export type OneOrSet<T extends object> = T | Set<T>;

/** The collection with `member` in it (once). */
export function addOne<T extends object>(members: OneOrSet<T> | undefined, member: T): OneOrSet<T> {
  if (members === undefined || members === member) return member;
  if (members instanceof Set) return members.add(member);
  return new Set([members, member]);
}

/** The collection without `member`: undefined when none is left; a Set left with one becomes that one. */
export function removeOne<T extends object>(members: OneOrSet<T> | undefined, member: T): OneOrSet<T> | undefined {
  if (members === member) return undefined;
  if (!(members instanceof Set) || !members.delete(member) || members.size !== 1) return members;
  return members.values().next().value;
}

export function hasOne<T extends object>(members: OneOrSet<T> | undefined, member: T): boolean {
  return members === member || (members instanceof Set && members.has(member));
}

export function countOf<T extends object>(members: OneOrSet<T> | undefined): number {
  if (members === undefined) return 0;
  return members instanceof Set ? members.size : 1;
}

/** The members as a new array, in the order they came. */
export function listOf<T extends object>(members: OneOrSet<T> | undefined): T[] {
  if (members === undefined) return [];
  return members instanceof Set ? [...members] : [members];
}
