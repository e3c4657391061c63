import { setupSharedKafka } from '@wirestream/testkit';

// The broker shared with the other projects of the run (started here when none is yet).
export default () => setupSharedKafka();
