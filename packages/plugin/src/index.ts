export {
  definePlugin,
  type EventDecision,
  type EventHookInput,
  type GatewayPlugin,
  type OperationGroupInfo,
  type PluginContext,
  type PluginError,
  type PluginPrincipal,
  type PluginResolvers,
  type SubscribeDecision,
  type SubscribeHookInput,
} from './types.js';
export { PluginConfigError, validatePlugin } from './validate-plugin.js';
// Not apply-resolvers.ts: it loads graphql-tools, which preparePlugin imports only for a plugin with resolvers.
export { preparePlugin, type PreparedPlugin } from './prepare-plugin.js';
