import { setupSharedKafka } from '@wirestream/testkit';

// One broker for every integration test file of this app (or the run's, when one is already
// published in WIRESTREAM_TEST_KAFKA_BROKERS); each test uses its own topics and consumer group.
export default () => setupSharedKafka();
