// Renders one event both ways, through the real seam (renderPayload): with the operation's
// projector, and with execute alone (the operation without its projector), for the projector tests.
import type { WirestreamSchema } from '@wirestream/schema';
import { decodeEnvelope, encodeEnvelope, type Envelope } from '@wirestream/wire';
import { projectBytes, scanEnvelope, type ByteProjector } from '../../src/core/operations/byte-projector.js';
import type { CompiledSubscription, OperationCompiler, OperationRequest } from '../../src/core/operations/operations.js';
import { createRenderer, renderPayload, type Renderer, type RenderTarget } from '../../src/core/delivery/render.js';
import { createHubStats } from '../../src/core/delivery/stats.js';

export interface BothPaths {
  /** What renderPayload returns with the projector (the gateway's path). */
  readonly rendered: string | undefined;
  /** What execute + JSON.stringify returns (the projector taken away). */
  readonly executed: string | undefined;
  /** The projector's own answer: undefined when it declined the event (or there is no projector). */
  readonly projected: string | undefined;
  /**
   * What renderPayload returns for the same event read from its envelope's text (scanEnvelope, then
   * the WebAssembly projector where it does not decline): always {@link fromDecoded} (decision 0043).
   */
  readonly fromText: string | undefined;
  /**
   * What renderPayload returns for `decodeEnvelope` of that text: `rendered`, but where the payload
   * holds an integer beyond 2^53 − 1, which decodeEnvelope keeps as its digits (raw JSON).
   */
  readonly fromDecoded: string | undefined;
  /** The WebAssembly projector's own answer for that text: undefined when it declined. */
  readonly fromBytes: string | undefined;
  readonly op: CompiledSubscription;
}

/** One renderer per schema, as one hub has. */
const renderers = new WeakMap<WirestreamSchema, Renderer>();
function rendererOf(ws: WirestreamSchema): Renderer {
  let renderer = renderers.get(ws);
  if (renderer === undefined) renderers.set(ws, (renderer = createRenderer(ws, createHubStats())));
  return renderer;
}

export function compileSubscription(compiler: OperationCompiler, request: OperationRequest): CompiledSubscription {
  const result = compiler.compile(request);
  if (!result.ok || result.operation.kind !== 'subscription') throw new Error(`expected a subscription: ${JSON.stringify(result)}`);
  return result.operation;
}

export function envelopeOf(topic: string, payload: Record<string, unknown>, offset = 1): Envelope {
  return { v: 1, topic, partition: 0, offset: String(offset), key: null, ts: 1_700_000_000_000, payload };
}

export function renderBoth(ws: WirestreamSchema, op: CompiledSubscription, payload: Record<string, unknown>, context?: object): BothPaths {
  const envelope = envelopeOf(op.route.topic, payload);
  const extensions = { position: { topic: envelope.topic, partition: envelope.partition, offset: envelope.offset } };
  const rendered = renderSync(renderPayload(rendererOf(ws), groupOf(op, context), envelope, extensions));
  const executed = renderSync(renderPayload(rendererOf(ws), groupOf({ ...op, projector: undefined }, context), envelope, extensions));
  const text = encodeEnvelope(envelope, JSON.stringify(payload));
  const { fromText, fromBytes } = renderFromText(rendererOf(ws), op, envelope, extensions, context, text);
  const fromDecoded = renderSync(renderPayload(rendererOf(ws), groupOf(op, context), decodeEnvelope(text), extensions));
  return { rendered, executed, projected: op.projector?.project(payload), fromText, fromBytes, fromDecoded, op };
}

/** The event rendered from its envelope's text, as the hub reads one from Redis (`decodeEnvelope` where the scan declines). */
export function renderFromText(
  renderer: Renderer,
  op: CompiledSubscription,
  envelope: Envelope,
  extensions: Record<string, unknown>,
  context?: object,
  text = encodeEnvelope(envelope, JSON.stringify(envelope.payload)),
): { readonly fromText: string | undefined; readonly fromBytes: string | undefined } {
  const bytes = renderer.bytes as ByteProjector;
  const scanned = scanEnvelope(bytes, text) ?? decodeEnvelope(text);
  const fromText = renderSync(renderPayload(renderer, groupOf(op, context), scanned, extensions));
  const plan = op.projector?.bytes;
  const tail = ',"extensions":' + JSON.stringify(extensions) + '}';
  const answer = plan === undefined ? undefined : projectBytes(bytes, scanned, plan, op.filter, tail);
  return { fromText, fromBytes: typeof answer === 'string' ? answer : undefined };
}

// renderPayload reads only the operation and the context of a group.
function groupOf(op: CompiledSubscription, context: object | undefined): RenderTarget {
  return { op, context };
}

function renderSync(result: string | Promise<string> | undefined): string | undefined {
  if (typeof result === 'object') throw new Error('expected a synchronous render (default resolvers)');
  return result;
}
