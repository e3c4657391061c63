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
export { applyPluginResolvers } from './apply-resolvers.js';
