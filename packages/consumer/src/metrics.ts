// Prometheus metrics of the consumers: records landed and set aside per group and type, and failed
// attempts by kind. Served on the admin port of the process that runs the consumers.
import { Counter, Registry } from 'prom-client';

export class ConsumerMetrics {
  readonly registry: Registry;
  readonly landed: Counter<'group' | 'type'>;
  readonly deadLetters: Counter<'group' | 'type' | 'code'>;
  readonly failures: Counter<'group' | 'kind'>;

  constructor(registry: Registry = new Registry()) {
    this.registry = registry;
    this.landed = new Counter({
      name: 'tally_consumer_records_landed_total',
      help: 'Records a consumer group landed in the warehouse (duplicates of stored records included).',
      labelNames: ['group', 'type'] as const,
      registers: [registry],
    });
    this.deadLetters = new Counter({
      name: 'tally_dead_letters_total',
      help: 'Records a consumer group set aside as undeliverable (see tally dead-letters), by failure code.',
      labelNames: ['group', 'type', 'code'] as const,
      registers: [registry],
    });
    this.failures = new Counter({
      name: 'tally_consumer_failures_total',
      help: 'Failed attempts to land a batch: outage (retried), records (narrowed down and set aside), warehouse (retried).',
      labelNames: ['group', 'kind'] as const,
      registers: [registry],
    });
  }
}
