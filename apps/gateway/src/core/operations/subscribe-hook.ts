/**
 * A plugin's `onSubscribe` (GATEWAY_PLUGIN), run once per subscribe on every transport, after the
 * operation compiled and passed the caller's scopes: allow, refuse with GraphQL errors, or replace
 * the variables (then the operation is compiled and checked again with them, so a narrowing cannot
 * widen what the scopes allow). The hook may answer with a promise: the result is then a promise
 * too, and the protocols hold the subscription meanwhile (session.ts, sse-session.ts).
 */
import type { GraphQLFormattedError } from 'graphql';
import type { GatewayPlugin, PluginPrincipal } from '@wirestream/plugin';
import type { Logger } from '@wirestream/telemetry';
import type { Principal } from '../../auth/authenticator.js';
import type { AccessScope, CompileResult, CompiledSubscription, OperationCompiler, OperationRequest } from './operations.js';

export type SubscribeHook = NonNullable<GatewayPlugin['onSubscribe']>;

const NO_CLAIMS: Readonly<Record<string, unknown>> = Object.freeze({});
const REFUSED: readonly GraphQLFormattedError[] = Object.freeze([{ message: 'Subscription refused by the gateway plugin.' }]);

/** What the hook needs besides the operation: the caller, the compiler to recompile with narrowed variables. */
export interface SubscribeHookCall {
  readonly hook: SubscribeHook;
  readonly compiler: OperationCompiler;
  readonly logger: Logger;
  readonly transport: string;
}

/**
 * The operation to subscribe (as compiled, or compiled again with the hook's variables), or the
 * errors to answer; a promise of them when the hook answered with one.
 */
export function runSubscribeHook(
  call: SubscribeHookCall,
  request: OperationRequest,
  operation: CompiledSubscription,
  access: AccessScope,
  principal: Principal | undefined,
): CompileResult | Promise<CompileResult> {
  let answer: ReturnType<SubscribeHook>;
  try {
    answer = call.hook({
      fieldName: operation.route.fieldName,
      topic: operation.route.topic,
      operationName: operation.operationName,
      variables: requestVariables(operation),
      principal: pluginPrincipal(principal),
      transport: call.transport,
    });
  } catch (err) {
    return { ok: false, errors: thrownErrors(call.logger, err) };
  }
  if (isThenable(answer)) {
    return Promise.resolve(answer).then(
      (decision) => decide(call, request, operation, access, decision),
      (err: unknown): CompileResult => ({ ok: false, errors: thrownErrors(call.logger, err) }),
    );
  }
  return decide(call, request, operation, access, answer);
}

type Decision = Exclude<ReturnType<SubscribeHook>, PromiseLike<unknown>>;

function isThenable(value: unknown): value is PromiseLike<Decision> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

function decide(call: SubscribeHookCall, request: OperationRequest, operation: CompiledSubscription, access: AccessScope, decision: Decision): CompileResult {
  if (decision === undefined || decision === true) return { ok: true, operation };
  if ('errors' in decision) {
    const errors = decision.errors.map((e) => ({ message: String(e.message), ...(e.extensions ? { extensions: { ...e.extensions } } : {}) }));
    return { ok: false, errors: errors.length > 0 ? errors : REFUSED };
  }
  const narrowed = call.compiler.compile({ ...request, variables: { ...decision.variables } }, access);
  if (narrowed.ok && narrowed.operation.kind !== 'subscription') return { ok: false, errors: REFUSED };
  return narrowed;
}

/** The operation's variables as the client sent them: those standing for its literals (literals.ts) are the compiler's. */
function requestVariables(operation: CompiledSubscription): Record<string, unknown> {
  const { variables, literalVariables } = operation;
  if (literalVariables === undefined) return variables;
  return Object.fromEntries(Object.entries(variables).filter(([name]) => !literalVariables.includes(name)));
}

function pluginPrincipal(principal: Principal | undefined): PluginPrincipal {
  if (principal === undefined) return { scopes: new Set(), claims: NO_CLAIMS };
  return { scopes: principal.scopes, tenant: principal.tenant, claims: principal.claims ?? NO_CLAIMS };
}

/** A GraphQLError (it has `extensions`) is the plugin's message to the client; anything else is logged and not shown. */
function thrownErrors(logger: Logger, err: unknown): readonly GraphQLFormattedError[] {
  if (err instanceof Error && 'extensions' in err) return [{ message: err.message }];
  logger.error({ err }, 'the gateway plugin onSubscribe threw; the subscription was refused');
  return REFUSED;
}
