// The analytics consumer as a library: consumes pageview, event and identify as one consumer group, in
// batches bounded by size and time (the runtime's batch loop, @tally/consumer), and lands them in the
// warehouse: events and identities, each record once per project (the first copy of a record id wins,
// however late a copy comes), its id in record_ids after it. A record the contract refuses, or whose
// values the warehouse refuses, is set aside as a dead letter and the others land.

import {
  type ConsumerOptions,
  consumeInBatches,
  firstCopies,
  type Lander,
  RecordError,
  type RunningBatchLoop,
} from '@tally/consumer';
import { type RecordType, validateRecord } from '@tally/contract';
import { type Row, recordIdRow, type Warehouse } from '@tally/warehouse';
import { eventRow, identityRow } from './rows.ts';

export const ANALYTICS_GROUP = 'analytics';
export const ANALYTICS_TOPICS: readonly RecordType[] = ['pageview', 'event', 'identify'];

export type AnalyticsConsumerOptions = ConsumerOptions;

/** A record as a row of the events or the identities table. */
export interface AnalyticsRow {
  table: 'events' | 'identities';
  row: Row;
}

export function analyticsLander(warehouse: Warehouse): Lander<AnalyticsRow> {
  return {
    prepare({ record }) {
      const checked = validateRecord(record);
      if (!checked.ok) throw new RecordError('contract', checked.message);
      if (record.type === 'pageview' || record.type === 'event')
        return { table: 'events', row: eventRow(record) };
      if (record.type === 'identify') return { table: 'identities', row: identityRow(record) };
      throw new RecordError('type', `the analytics consumer does not land ${record.type} records`);
    },
    async land(items) {
      const fresh = await firstCopies(warehouse, items);
      await warehouse.insert(
        'events',
        fresh.filter((i) => i.row.table === 'events').map((i) => i.row.row),
      );
      await warehouse.insert(
        'identities',
        fresh.filter((i) => i.row.table === 'identities').map((i) => i.row.row),
      );
      await warehouse.insert(
        'record_ids',
        fresh.map((i) => recordIdRow(i.message.record)),
      );
    },
  };
}

export function startAnalyticsConsumer(options: AnalyticsConsumerOptions): RunningBatchLoop {
  const group = options.group ?? ANALYTICS_GROUP;
  const consumer = options.log.consumer({ group, topics: ANALYTICS_TOPICS });
  const loop = consumeInBatches({
    ...options.batch,
    group,
    consumer,
    deadLetters: options.log.deadLetters,
    lander: analyticsLander(options.warehouse),
    logger: options.logger,
    metrics: options.metrics,
    onLanded: (messages, setAside) =>
      options.logger?.info(
        { records: messages.length, set_aside: setAside.length },
        'analytics batch landed',
      ),
  });
  return {
    done: loop.done.finally(() => consumer.close()),
    stop: () => loop.stop(),
  };
}
