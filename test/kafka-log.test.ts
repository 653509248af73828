// The Kafka record log against a real Apache Kafka 4 broker and a real schema registry: the same
// conformance suite as the embedded log, each fixture on topics of its own.

import { openKafkaLog } from '@tally/log';
import { describeRecordLogConformance } from '@tally/log/conformance';
import { kafkaLogOptions } from './support/kafka.ts';

describeRecordLogConformance('Kafka', async () => {
  const options = kafkaLogOptions();
  let log = await openKafkaLog(options);
  return {
    log,
    async reopen() {
      await log.close();
      log = await openKafkaLog(options);
      return log;
    },
  };
});
