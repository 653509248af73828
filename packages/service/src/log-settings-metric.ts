// tally_kafka_topic_setting_mismatch{topic,setting}: 1 for each setting of a Kafka topic that differs from
// the configuration, as the process's record log last compared them (at open; the health view compares
// again). A gauge over the log's last answer, read at each scrape: no request to the brokers per scrape.
// Every process with a Kafka log serves it (the gateway, the consumers, npm start); with several gateway
// event loops their metrics are merged by the highest value, so that a mismatch counts once.
import { Gauge, type Registry } from 'prom-client';

/** What the gauge reads of a record log (structural: @tally/log's RecordLog has it). */
export interface SettingsOfLog {
  lastSettingsCheck?(): {
    mismatches: ReadonlyArray<{ topic: string; setting: string }>;
  } | null;
}

export const TOPIC_SETTING_MISMATCH = 'tally_kafka_topic_setting_mismatch';

export function watchLogSettings(registry: Registry, log: SettingsOfLog): Gauge<'topic' | 'setting'> {
  const existing = registry.getSingleMetric(TOPIC_SETTING_MISMATCH);
  if (existing) registry.removeSingleMetric(TOPIC_SETTING_MISMATCH);
  return new Gauge({
    name: TOPIC_SETTING_MISMATCH,
    help: 'Settings of a Kafka topic that differ from the configuration (1 each: partitions, replication.factor, min.insync.replicas, retention.ms, retention.bytes); Tally never changes an existing topic.',
    labelNames: ['topic', 'setting'] as const,
    aggregator: 'max',
    registers: [registry],
    collect() {
      this.reset();
      for (const m of log.lastSettingsCheck?.()?.mismatches ?? []) {
        this.set({ topic: m.topic, setting: m.setting }, 1);
      }
    },
  });
}
