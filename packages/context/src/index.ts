export {
  createLazyContext,
  disposeLazyContext,
  isMaterialized,
  materializedKeys,
  type LazyContext,
  type LazyFactories,
} from './lazy-context.js';
