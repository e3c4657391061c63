// The arithmetic of the capacity model (scripts/capacity.mjs): measured figures in, pods and
// shards out. Pure functions, no I/O. The figures come from scripts/capacity-figures.mjs.
//
// A workload is sockets, deliveries/s (frames written to sockets) and a shape: how many sockets
// receive each event (F) and how many of them share one distinct operation (S, the same document +
// variables + scope, executed once per event for all of them). Events/s = deliveries/s ÷ F. Two
// shapes bound every workload: "unicast" (F = S = 1: every event to one socket with its own
// operation: the most events, executions and Redis messages per delivery) and "broadcast" (every
// event to every socket through one operation: the fewest).

/**
 * @typedef {{ value: number }} Figure
 * @typedef {{ name: string, socketsPerEvent: number | 'all', socketsPerOperation: number | 'all' }} Shape
 * @typedef {{ sockets: number, deliveriesPerS: number }} Scenario
 */

/** At least this many gateway and ingest pods (the production HPAs' minReplicas) and Redis primaries (Redis Cluster's minimum). */
export const minimumPods = 3;
export const minimumShards = 3;

export const unicast = /** @type {Shape} */ ({ name: 'unicast', socketsPerEvent: 1, socketsPerOperation: 1 });
export const broadcast = /** @type {Shape} */ ({ name: 'broadcast', socketsPerEvent: 'all', socketsPerOperation: 'all' });

/**
 * What one unit holds or does at the given headroom: `usable = 1 − headroom` of each pod's
 * sockets and of each core is planned for, the rest is room for a lost replica's clients and bursts.
 * @param {ReturnType<typeof import('./capacity-figures.mjs').readFigures>} f
 * @param {number} headroom  fraction, 0 ≤ h < 1
 */
export function unitCapacities(f, headroom) {
  const usable = 1 - headroom;
  const memorySockets = Math.floor((f.gatewayMemoryLimitBytes.value - f.gatewayIdleRssBytes.value) / f.gatewayPeakBytesPerSocket.value);
  const heldSockets = Math.min(f.gatewayMaxSockets.value, memorySockets);
  return {
    usable,
    gateway: {
      memorySockets,
      socketBound: memorySockets < f.gatewayMaxSockets.value ? 'memory' : 'measured maximum',
      plannedSockets: Math.floor(heldSockets * usable),
      // One event loop per pod: one core (the pod's CPU request) is all it can use.
      deliveriesPerCore: 1e6 / f.gatewayUsPerDelivery.value,
      unicastDeliveriesPerCore: 1e6 / f.gatewayUsPerUnicastEvent.value,
      plannedDeliveries: (1e6 * usable) / f.gatewayUsPerDelivery.value,
      plannedUnicastDeliveries: (1e6 * usable) / f.gatewayUsPerUnicastEvent.value,
      // Events/s in at the planned socket count when each event goes to every socket of the pod
      // through one operation: one execution and plannedSockets deliveries per event.
      plannedBroadcastEvents: (1e6 * usable) / (Math.floor(heldSockets * usable) * f.gatewayUsPerDelivery.value + f.gatewayUsPerExecution.value),
    },
    ingest: {
      eventsPerCore: 1e6 / f.ingestUsPerEvent.value,
      plannedEvents: (1e6 * usable) / f.ingestUsPerEvent.value,
    },
    redis: {
      eventsPerCore: 1e6 / f.redisUsPerEvent.value,
      plannedEvents: (1e6 * usable) / f.redisUsPerEvent.value,
      plannedSubscriberMessages: f.redisUsPerSubscriberMessage ? (1e6 * usable) / f.redisUsPerSubscriberMessage.value : undefined,
    },
  };
}

/**
 * Gateways that receive an event sent to F sockets spread at random over P gateways (the load
 * balancer places clients without regard to what they subscribe): P × (1 − (1 − 1/P)^F).
 * @param {number} pods
 * @param {number} socketsPerEvent
 */
export function gatewaysPerEvent(pods, socketsPerEvent) {
  return pods === 1 ? 1 : pods * (1 - Math.pow(1 - 1 / pods, socketsPerEvent));
}

/**
 * Pods, shards and loads for one scenario and shape.
 * @param {ReturnType<typeof import('./capacity-figures.mjs').readFigures>} f
 * @param {ReturnType<typeof unitCapacities>} units
 * @param {Scenario} scenario
 * @param {Shape} shape
 */
export function plan(f, units, scenario, shape) {
  const { sockets, deliveriesPerS } = scenario;
  const socketsPerEvent = shape.socketsPerEvent === 'all' ? sockets : shape.socketsPerEvent;
  const socketsPerOperation = shape.socketsPerOperation === 'all' ? socketsPerEvent : shape.socketsPerOperation;
  const eventsPerS = deliveriesPerS / socketsPerEvent;

  // Gateways: enough for the sockets, then enough CPU. More pods spread each event over more of
  // them, each with fewer sockets per execution, so CPU per delivery rises with the pod count:
  // iterate to the fixed point (monotone, a few rounds).
  const socketPods = Math.ceil(sockets / units.gateway.plannedSockets);
  let pods = Math.max(minimumPods, socketPods);
  let cpu = gatewayCpu(f, pods, socketsPerEvent, socketsPerOperation);
  for (let round = 0; round < 100; round++) {
    const cpuPods = Math.ceil((deliveriesPerS * cpu.usPerDelivery) / (1e6 * units.usable));
    if (cpuPods <= pods) break;
    pods = cpuPods;
    cpu = gatewayCpu(f, pods, socketsPerEvent, socketsPerOperation);
  }
  const floor = Math.max(minimumPods, socketPods);
  const gatewayBound = pods > floor ? 'CPU' : socketPods >= minimumPods ? 'sockets' : 'minimum';

  // Ingest: CPU per event; Kafka partitions of the widest topic ≥ the replicas that share it.
  const ingestNeed = Math.ceil(eventsPerS / units.ingest.plannedEvents);
  const ingestPods = Math.max(minimumPods, ingestNeed);

  // Redis: each event is written once (XADD + PUBLISH) and delivered once per subscribed gateway.
  const subscriberMessagesPerS = eventsPerS * cpu.gateways;
  const redisCores =
    (eventsPerS * f.redisUsPerEvent.value + (f.redisUsPerSubscriberMessage ? subscriberMessagesPerS * f.redisUsPerSubscriberMessage.value : 0)) / 1e6;
  const shardNeed = Math.ceil(redisCores / units.usable);
  const shards = Math.max(minimumShards, shardNeed);
  const partitions = ingestPods;
  const historyBytes = f.historyLength.value * partitions * f.envelopeBytes.value;

  return {
    scenario,
    shape: { name: shape.name, socketsPerEvent, socketsPerOperation },
    eventsPerS,
    gateway: {
      pods,
      bound: gatewayBound,
      socketPods,
      plannedSockets: units.gateway.plannedSockets,
      usPerDelivery: cpu.usPerDelivery,
      gatewaysPerEvent: cpu.gateways,
      socketsPerPod: sockets / pods,
      deliveriesPerPod: deliveriesPerS / pods,
      eventsPerPod: (eventsPerS * cpu.gateways) / pods,
    },
    ingest: { pods: ingestPods, need: ingestNeed, partitions },
    redis: {
      shards,
      need: shardNeed,
      complete: f.redisUsPerSubscriberMessage !== undefined,
      cores: redisCores,
      publishesPerS: eventsPerS,
      subscriberMessagesPerS,
      // Ingest writes each envelope twice (XADD, PUBLISH); each subscribed gateway reads it once.
      inBytesPerS: 2 * eventsPerS * f.envelopeBytes.value,
      outBytesPerS: subscriberMessagesPerS * f.envelopeBytes.value,
      historyBytes,
      historyBytesPerShard: historyBytes / shards,
    },
  };
}

/**
 * CPU per delivery on a gateway when it is one of `pods`: the delivery itself, plus one execution
 * per distinct operation shared by the sockets of this pod that receive the event, plus what the
 * event itself costs the pod (read, parse, route), shared by the sockets that receive it there. That
 * last part is what the measured unicast figure (one socket per event) has beyond a delivery and an
 * execution; for unicast the sum is the measured figure itself.
 * @param {ReturnType<typeof import('./capacity-figures.mjs').readFigures>} f
 * @param {number} pods
 * @param {number} socketsPerEvent
 * @param {number} socketsPerOperation
 */
function gatewayCpu(f, pods, socketsPerEvent, socketsPerOperation) {
  const gateways = gatewaysPerEvent(pods, socketsPerEvent);
  const socketsPerEventOnPod = socketsPerEvent / gateways;
  const socketsPerExecution = Math.max(1, Math.min(socketsPerOperation, socketsPerEventOnPod));
  const usPerEvent = Math.max(0, f.gatewayUsPerUnicastEvent.value - f.gatewayUsPerDelivery.value - f.gatewayUsPerExecution.value);
  return { gateways, usPerDelivery: f.gatewayUsPerDelivery.value + f.gatewayUsPerExecution.value / socketsPerExecution + usPerEvent / Math.max(1, socketsPerEventOnPod) };
}
