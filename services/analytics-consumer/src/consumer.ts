// The analytics consumer as a library: consumes pageview, event and identify as one consumer group, in
// batches bounded by size and time, and lands them in the warehouse (events and identities tables).
// Offsets are committed only after both inserts succeeded; a batch delivered again after a crash is
// stored once (both tables are ReplacingMergeTree keyed by the record id).
import type { IngestRecordOf, RecordType } from '@tally/contract';
import type { LogMessage, RecordLog } from '@tally/log';
import { type BatchOptions, consumeInBatches, type RunningBatchLoop, type Warehouse } from '@tally/warehouse';
import { eventRow, identityRow } from './rows.ts';

export const ANALYTICS_GROUP = 'analytics';
export const ANALYTICS_TOPICS: readonly RecordType[] = ['pageview', 'event', 'identify'];

export interface ConsumerLogger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export interface AnalyticsConsumerOptions {
  log: RecordLog;
  warehouse: Warehouse;
  batch: BatchOptions;
  logger?: ConsumerLogger;
  group?: string;
}

/** Writes one batch of analytics records to the warehouse. */
export async function landAnalytics(warehouse: Warehouse, messages: readonly LogMessage[]): Promise<void> {
  const events = [];
  const identities = [];
  for (const { record } of messages) {
    if (record.type === 'pageview' || record.type === 'event') {
      events.push(eventRow(record as IngestRecordOf<'pageview'> | IngestRecordOf<'event'>));
    } else if (record.type === 'identify') {
      identities.push(identityRow(record));
    }
  }
  await warehouse.insert('events', events);
  await warehouse.insert('identities', identities);
}

export function startAnalyticsConsumer(options: AnalyticsConsumerOptions): RunningBatchLoop {
  const consumer = options.log.consumer({
    group: options.group ?? ANALYTICS_GROUP,
    topics: ANALYTICS_TOPICS,
  });
  const loop = consumeInBatches({
    ...options.batch,
    consumer,
    land: (messages) => landAnalytics(options.warehouse, messages),
    onLanded: (messages) => options.logger?.info({ records: messages.length }, 'analytics batch landed'),
    onRetry: (error, attempt) =>
      options.logger?.warn({ err: error, attempt }, 'analytics batch failed; retrying'),
  });
  return {
    done: loop.done.finally(() => consumer.close()),
    stop: () => loop.stop(),
  };
}
