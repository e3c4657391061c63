// Renders one event both ways, through the real seam (renderPayload): with the operation's
// projector, and with execute alone (the operation without its projector), for the projector tests.
import type { WirestreamSchema } from '@wirestream/schema';
import type { Envelope } from '@wirestream/wire';
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
  return { rendered, executed, projected: op.projector?.project(payload), op };
}

// renderPayload reads only the operation and the context of a group.
function groupOf(op: CompiledSubscription, context: object | undefined): RenderTarget {
  return { op, context };
}

function renderSync(result: string | Promise<string> | undefined): string | undefined {
  if (typeof result === 'object') throw new Error('expected a synchronous render (default resolvers)');
  return result;
}
