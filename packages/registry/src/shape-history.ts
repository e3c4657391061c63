import type { AvroField, AvroShape, AvroSlot } from './avro-shape.js';

/**
 * The shapes of every version of a subject merged into one (decision 0035): what the events of any of
 * them publish, since each event is decoded with its writer's schema and the topic holds events of
 * older versions too. The rule, from the oldest version to the latest:
 * - a record has every field of every version, each `nullable` when a version lacks it (its events
 *   publish no such key) or allows null, and `absentIn` names those versions;
 * - enums have every symbol of every version (open when one is);
 * - numbers widen (`int` → `long` → `float`), an enum that became a string is a string;
 * - shapes that cannot merge (a field that was a string and became a record) are a union of both,
 *   which the generator writes as a custom scalar and the start-up check compares branch by branch.
 * Names and docs are the latest version's.
 */
export function mergeVersionSlots(versions: readonly { readonly version: number; readonly slot: AvroSlot }[]): AvroSlot {
  const [first, ...rest] = versions;
  if (first === undefined) throw new RangeError('mergeVersionSlots needs at least one version');
  let merged = first.slot;
  const seen = [first.version];
  for (const next of rest) {
    merged = mergeSlots(merged, next.slot, { olderVersions: [...seen], newerVersion: next.version, memo: new Map() });
    seen.push(next.version);
  }
  return merged;
}

interface Merge {
  /** The versions the older shape stands for. */
  readonly olderVersions: readonly number[];
  readonly newerVersion: number;
  /** Merged records by (older, newer): shared and recursive types are merged once. */
  readonly memo: Map<AvroShape, Map<AvroShape, AvroShape>>;
}

function mergeSlots(older: AvroSlot, newer: AvroSlot, merge: Merge): AvroSlot {
  return { shape: mergeShapes(older.shape, newer.shape, merge), nullable: older.nullable || newer.nullable };
}

const NUMBER_RANK: Readonly<Record<string, number>> = { int: 1, long: 2, float: 3 };

function mergeShapes(older: AvroShape, newer: AvroShape, merge: Merge): AvroShape {
  if (older === newer) return newer;
  const known = merge.memo.get(older)?.get(newer);
  if (known !== undefined) return known;
  if (older.kind === 'record' && newer.kind === 'record') return mergeRecords(older, newer, merge);
  if (older.kind === 'enum' && newer.kind === 'enum') {
    const symbols = [...newer.symbols, ...older.symbols.filter((s) => !newer.symbols.includes(s))];
    return { ...newer, symbols, ...(older.open === true || newer.open === true ? { open: true } : {}) };
  }
  if (older.kind === 'array' && newer.kind === 'array') return { kind: 'array', items: mergeSlots(older.items, newer.items, merge) };
  if (older.kind === 'map' && newer.kind === 'map') return { kind: 'map', values: mergeSlots(older.values, newer.values, merge) };
  if (older.kind === 'primitive' && newer.kind === 'primitive') {
    if (older.json === newer.json) return newer;
    const olderRank = NUMBER_RANK[older.json];
    const newerRank = NUMBER_RANK[newer.json];
    if (olderRank !== undefined && newerRank !== undefined) return olderRank > newerRank ? older : newer;
  }
  if (older.kind === 'enum' && newer.kind === 'primitive' && newer.json === 'string') return newer;
  if (newer.kind === 'enum' && older.kind === 'primitive' && older.json === 'string') return older;
  return unionOf([...branchesOf(older), ...branchesOf(newer)], merge);
}

function branchesOf(shape: AvroShape): readonly AvroShape[] {
  return shape.kind === 'union' ? shape.branches : [shape];
}

/** Branches that merge (same kind, both numbers) become one; a single branch left is no union. */
function unionOf(branches: readonly AvroShape[], merge: Merge): AvroShape {
  const kept: AvroShape[] = [];
  for (const branch of branches) {
    const index = kept.findIndex((k) => sameFamily(k, branch));
    if (index < 0) kept.push(branch);
    else kept[index] = mergeShapes(kept[index] as AvroShape, branch, merge);
  }
  return kept.length === 1 ? (kept[0] as AvroShape) : { kind: 'union', branches: kept };
}

function sameFamily(a: AvroShape, b: AvroShape): boolean {
  if (a.kind === 'primitive' && b.kind === 'primitive') return a.json === b.json || (NUMBER_RANK[a.json] !== undefined && NUMBER_RANK[b.json] !== undefined);
  if (a.kind === 'record' && b.kind === 'record') return a.name === b.name;
  if (a.kind === 'enum' && b.kind === 'enum') return a.name === b.name;
  return a.kind === b.kind && (a.kind === 'array' || a.kind === 'map');
}

function mergeRecords(older: AvroShape & { kind: 'record' }, newer: AvroShape & { kind: 'record' }, merge: Merge): AvroShape {
  const fields: AvroField[] = [];
  const record: AvroShape = { kind: 'record', name: newer.name, doc: newer.doc ?? older.doc, fields };
  let byNewer = merge.memo.get(older);
  if (byNewer === undefined) merge.memo.set(older, (byNewer = new Map<AvroShape, AvroShape>()));
  byNewer.set(newer, record);
  const olderByName = new Map(older.fields.map((f) => [f.name, f]));
  const newerNames = new Set(newer.fields.map((f) => f.name));
  for (const field of newer.fields) {
    const before = olderByName.get(field.name);
    if (before === undefined) {
      fields.push(absent(field, [...merge.olderVersions, ...(field.absentIn ?? [])]));
      continue;
    }
    const absentIn = [...(before.absentIn ?? []), ...(field.absentIn ?? [])];
    fields.push({ name: field.name, doc: field.doc ?? before.doc, ...mergeSlots(before, field, merge), ...(absentIn.length === 0 ? {} : { absentIn }) });
  }
  // Fields the newer version removed: still published by the older versions' events.
  for (const field of older.fields) if (!newerNames.has(field.name)) fields.push(absent(field, [...(field.absentIn ?? []), merge.newerVersion]));
  return record;
}

function absent(field: AvroField, absentIn: readonly number[]): AvroField {
  return { ...field, nullable: true, absentIn: [...new Set(absentIn)].sort((a, b) => a - b) };
}
