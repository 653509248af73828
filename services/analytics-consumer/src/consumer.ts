// The analytics consumer as a library: consumes pageview, event and identify as one consumer group, in
// batches bounded by size and time (the runtime's batch loop, @tally/consumer), and lands them in the
// warehouse: events and identities, each record once per project (the first copy of a record id wins,
// however late a copy comes), its id in record_ids after it. A record the contract refuses, or whose
// values the warehouse refuses, is set aside as a dead letter and the others land.
// After each batch, the visits of every visitor with a pageview or event in it are recomputed around
// those records' times from the visitor's stored records (visits-table.ts in @tally/warehouse; also for
// copies already stored, so that a crash between the writes is repaired by the redelivery).

import {
  type BatchOptions,
  type ConsumerLogger,
  type ConsumerMetrics,
  consumeInBatches,
  firstCopies,
  type Lander,
  RecordError,
  type RunningBatchLoop,
} from '@tally/consumer';
import { type RecordType, validateRecord } from '@tally/contract';
import type { RecordLog } from '@tally/log';
import {
  backfillVisits,
  type Row,
  recordIdRow,
  refreshVisits,
  type TouchedVisitor,
  type Warehouse,
} from '@tally/warehouse';
import { eventRow, identityRow } from './rows.ts';

export const ANALYTICS_GROUP = 'analytics';
export const ANALYTICS_TOPICS: readonly RecordType[] = ['pageview', 'event', 'identify'];

export interface AnalyticsConsumerOptions {
  log: RecordLog;
  warehouse: Warehouse;
  batch: BatchOptions;
  logger?: ConsumerLogger | undefined;
  metrics?: ConsumerMetrics | undefined;
  group?: string;
}

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
      for (const [project, touched] of touchedVisitors(items))
        await refreshVisits(warehouse, project, touched);
    },
  };
}

/** Per project, the visitors with a pageview or custom event (not a bot's) among the items, and their times. */
function touchedVisitors(items: readonly { row: AnalyticsRow }[]): Map<string, TouchedVisitor[]> {
  const byProject = new Map<string, Map<string, TouchedVisitor>>();
  for (const { row } of items) {
    if (row.table !== 'events' || row.row.is_bot) continue;
    const project = row.row.project_id as string;
    const visitor = row.row.visitor_id as string;
    const time = row.row.timestamp as number;
    const visitors = byProject.get(project) ?? new Map<string, TouchedVisitor>();
    byProject.set(project, visitors);
    const touched = visitors.get(visitor);
    if (touched) {
      touched.first = Math.min(touched.first, time);
      touched.last = Math.max(touched.last, time);
    } else visitors.set(visitor, { visitor_id: visitor, first: time, last: time });
  }
  return new Map([...byProject].map(([project, visitors]) => [project, [...visitors.values()]]));
}

export function startAnalyticsConsumer(options: AnalyticsConsumerOptions): RunningBatchLoop {
  const group = options.group ?? ANALYTICS_GROUP;
  const consumer = options.log.consumer({ group, topics: ANALYTICS_TOPICS });
  // A warehouse migrated from before the visits table gets it filled at start; if that fails, the first
  // batch tries again (and waits for it).
  let backfill: Promise<void> | null = null;
  const backfilled = () => {
    backfill ??= backfillVisits(options.warehouse).then(
      (visits) => {
        if (visits > 0) options.logger?.info({ visits }, 'visits backfilled');
      },
      (error: unknown) => {
        backfill = null;
        throw error;
      },
    );
    return backfill;
  };
  backfilled().catch((error: unknown) =>
    options.logger?.warn(
      { error: (error as Error)?.name, message: (error as Error)?.message },
      'visits backfill failed; retrying with the first batch',
    ),
  );
  const lander = analyticsLander(options.warehouse);
  const loop = consumeInBatches({
    ...options.batch,
    group,
    consumer,
    deadLetters: options.log.deadLetters,
    lander: {
      prepare: lander.prepare,
      land: async (items) => {
        await backfilled();
        await lander.land(items);
      },
    },
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
    stop: async () => {
      await loop.stop();
      await backfill?.catch(() => {});
    },
  };
}
