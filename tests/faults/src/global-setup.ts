import { setupSharedKafka } from '@wirestream/testkit';

// One broker for the fault files that do not restart it; each test has its own topics and group.
// A file that restarts the broker (kafka-restart) starts its own instead.
export default () => setupSharedKafka();
