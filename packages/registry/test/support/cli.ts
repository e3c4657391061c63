/** Shared by the registry's tests (not built into dist): the schema CLI run in process, and a full selection. */
import { getNamedType, isObjectType, type GraphQLObjectType } from 'graphql';
import { runSchemaCli } from '../../src/index.js';

/** Runs `wirestream-schema` with `argv` in this process and collects what it printed. */
export async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runSchemaCli(argv, { env: {}, stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}

/** `{ a b { c } }`: every field of `type`, objects expanded (the generated types are not recursive). */
export function selectAll(type: GraphQLObjectType): string {
  return `{ ${Object.values(type.getFields())
    .map((f) => {
      const named = getNamedType(f.type);
      return isObjectType(named) ? `${f.name} ${selectAll(named)}` : f.name;
    })
    .join(' ')} }`;
}
