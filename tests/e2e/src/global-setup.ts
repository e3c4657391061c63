import { setupSharedKafka } from '@wirestream/testkit';

// One broker for every e2e file; each test uses its own topics and consumer groups.
export default () => setupSharedKafka();
