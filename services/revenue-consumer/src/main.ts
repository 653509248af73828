// The revenue consumer as its own process (one container in docker-compose.yml): see runConsumerProcess.
import { runConsumerProcess } from '@tally/consumer';
import { startRevenueConsumer } from './consumer.ts';

await runConsumerProcess('revenue-consumer', startRevenueConsumer, (config) => config.REVENUE_BATCH_WAIT_MS);
