// The analytics consumer as its own process (one container in docker-compose.yml): see runConsumerProcess.
import { runConsumerProcess } from '@tally/consumer';
import { startAnalyticsConsumer } from './consumer.ts';

await runConsumerProcess('analytics-consumer', startAnalyticsConsumer);
