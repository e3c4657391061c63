// Render the kustomizations with the real tool and check the objects against the Kubernetes API
// schemas, without a cluster.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { parseAllDocuments } from 'yaml';

/** A rendered Kubernetes object; fields beyond the type meta are read by the tests as needed. */
export interface KubeObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly labels?: Record<string, string> };
  readonly [field: string]: unknown;
}

/**
 * `kubectl kustomize <dir>`: the kustomize built into kubectl (Debian's kubernetes-client, or any
 * kubectl on PATH; scripts/bootstrap.sh installs one when missing). Returns the objects in order.
 */
export function kustomize(dir: string): KubeObject[] {
  const result = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
  if (result.error) {
    throw new Error(`kubectl kustomize ${dir}: ${result.error.message} — install kubectl (Debian: apt-get install kubernetes-client; scripts/bootstrap.sh does it)`);
  }
  if (result.status !== 0) throw new Error(`kubectl kustomize ${dir} failed (exit ${result.status}):\n${result.stderr}`);
  return parseAllDocuments(result.stdout).map((doc, i) => {
    if (doc.errors.length > 0) throw new Error(`document ${i} of the render: ${doc.errors.map((e) => e.message).join('; ')}`);
    return doc.toJS() as KubeObject;
  });
}

/**
 * Whether `kubectl kustomize` renders kustomize Components (`kind: Component`, `components:`): kustomize
 * ≥ v3.7, embedded from kubectl 1.21 on. Debian's kubernetes-client 1.20 embeds kustomize v2.0.
 */
export function kustomizeRendersComponents(): boolean {
  const result = spawnSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8' });
  if (result.status !== 0) return false;
  const version = JSON.parse(result.stdout) as { clientVersion?: { major?: string; minor?: string }; kustomizeVersion?: string };
  const kustomize = /^v(\d+)\.(\d+)/.exec(version.kustomizeVersion ?? '');
  if (kustomize) return Number(kustomize[1]) > 3 || (Number(kustomize[1]) === 3 && Number(kustomize[2]) >= 7);
  // kubectl < 1.24 does not print its kustomize version: 1.21–1.23 embed v4.
  return Number(version.clientVersion?.major) > 1 || Number.parseInt(version.clientVersion?.minor ?? '0', 10) >= 21;
}

/** `kubectl version --client` in one line, for messages. */
export function kubectlVersion(): string {
  const result = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
  return (result.stdout ?? '').trim().split('\n').join('; ');
}

/** kubernetes-models' module path of a kind: `apps/v1` Deployment → `apps/v1/Deployment`, `v1` Service → `v1/Service`. */
function modelPath(object: KubeObject): string {
  if (!/^([a-z0-9.-]+\/)?v\d+((alpha|beta)\d+)?$/.test(object.apiVersion) || !/^[A-Z][A-Za-z0-9]*$/.test(object.kind)) {
    throw new Error(`unexpected apiVersion/kind ${object.apiVersion} ${object.kind}`);
  }
  return `kubernetes-models/${object.apiVersion}/${object.kind}`;
}

/**
 * Validates an object against the JSON schema of its kind, generated from the Kubernetes OpenAPI
 * specification and compiled with Ajv by kubernetes-models: types, enums, formats, required
 * fields. Returns the problems (empty when valid). Unknown fields pass, as in the OpenAPI
 * schema: strictTypeCheck finds those.
 */
export async function validateAgainstSchema(object: KubeObject): Promise<string[]> {
  const module = (await import(modelPath(object))) as Record<string, unknown>;
  const Model = module[object.kind] as (new (data: unknown) => { validate(): void }) | undefined;
  if (typeof Model !== 'function') return [`kubernetes-models has no ${object.apiVersion} ${object.kind}`];
  try {
    new Model(object).validate();
    return [];
  } catch (err) {
    return [err instanceof Error ? err.message : String(err)];
  }
}

/**
 * Strict check, like `kubectl apply --validate=strict`: every object is written into a TypeScript
 * file as a literal typed with its kind's interface (kubernetes-models, from the same OpenAPI
 * specification), and the compiler's excess-property check reports every unknown field, at any
 * depth, as well as wrong types. Returns one line per problem, naming the object.
 */
export function strictTypeCheck(objects: readonly KubeObject[]): string[] {
  // A file in this package, so `kubernetes-models` resolves from its node_modules; never written.
  const fileName = join(dirname(fileURLToPath(import.meta.url)), '__rendered-manifests__.ts');
  const lines: string[] = [];
  const owners: { start: number; name: string }[] = [];
  objects.forEach((object, i) => {
    lines.push(`import type { I${object.kind} as T${i} } from '${modelPath(object)}';`);
  });
  objects.forEach((object, i) => {
    owners.push({ start: lines.length, name: `${object.kind} ${object.metadata.name}` });
    lines.push(`export const o${i}: T${i} = ${JSON.stringify(object, null, 2)};`);
  });
  const source = lines.join('\n');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const readFile = host.readFile.bind(host);
  host.getSourceFile = (name, languageVersion, ...rest) =>
    name === fileName ? ts.createSourceFile(name, source, languageVersion, true) : getSourceFile(name, languageVersion, ...rest);
  host.fileExists = (name) => name === fileName || fileExists(name);
  host.readFile = (name) => (name === fileName ? source : readFile(name));
  const program = ts.createProgram([fileName], options, host);
  const diagnostics = ts.getPreEmitDiagnostics(program);
  const lineStarts = owners.map((o) => o.start);
  return diagnostics.map((d) => {
    const message = ts.flattenDiagnosticMessageText(d.messageText, ' ');
    if (d.file?.fileName !== fileName || d.start === undefined) return message;
    const { line } = d.file.getLineAndCharacterOfPosition(d.start);
    let owner = 'import';
    for (let k = 0; k < lineStarts.length; k++) if (lineStarts[k]! <= line) owner = owners[k]!.name;
    // The line inside the JSON names the field.
    const text = source.split('\n')[line]?.trim() ?? '';
    return `${owner}: ${message} (at ${text})`;
  });
}
