export { createAuctionEventGenerator, DEMO_TOPICS } from './auction-event-generator.js';
export type {
  AuctionEventGenerator,
  AuctionEventGeneratorOptions,
  DemoEvent,
  DemoTopic,
} from './auction-event-generator.js';
