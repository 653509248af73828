// Prometheus metrics of the consumers: records landed and set aside per group and type, failed attempts by
// kind, and per group the records waiting and the seconds since its last committed batch (from the
// process's ConsumerProgress, read when scraped). Served on the admin port of the process that runs the
// consumers.
import { Counter, Gauge, Registry } from 'prom-client';
import type { GroupProgressState } from './progress.ts';

export class ConsumerMetrics {
  readonly registry: Registry;
  readonly landed: Counter<'group' | 'type'>;
  readonly deadLetters: Counter<'group' | 'type' | 'code'>;
  readonly failures: Counter<'group' | 'kind'>;
  readonly lag: Gauge<'group'>;
  readonly lastProgress: Gauge<'group'>;
  #progress: { states(): GroupProgressState[] } | null = null;

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
      help: 'Failed attempts to land a batch: outage (retried), records (narrowed down and set aside), too-large (landed in halves), warehouse (retried).',
      labelNames: ['group', 'kind'] as const,
      registers: [registry],
    });
    const states = () => this.#progress?.states() ?? [];
    this.lag = new Gauge({
      name: 'tally_consumer_lag_records',
      help: 'Records waiting for a consumer group: its lag in the record log, at least the batch it holds.',
      labelNames: ['group'] as const,
      registers: [registry],
      collect() {
        for (const s of states()) this.set({ group: s.group }, s.lag);
      },
    });
    this.lastProgress = new Gauge({
      name: 'tally_consumer_last_progress_seconds',
      help: 'Seconds since a consumer group last committed a batch (or since the process started it).',
      labelNames: ['group'] as const,
      registers: [registry],
      collect() {
        const now = Date.now();
        for (const s of states())
          this.set({ group: s.group }, Math.max(0, (now - s.last_progress_at) / 1000));
      },
    });
  }

  /** Where the two gauges read each group's state (the process's ConsumerProgress). */
  watch(progress: { states(): GroupProgressState[] }): void {
    this.#progress = progress;
  }
}
