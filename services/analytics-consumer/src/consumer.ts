// The analytics consumer as a library: consumes pageview, event and identify as one consumer group, in
// batches bounded by size and time (the runtime's batch loop, @tally/consumer), and lands them in the
// warehouse: events and identities, each record once per project (the first copy of a record id wins,
// however late a copy comes), its id in record_ids after it. A record the contract refuses, or whose
// values the warehouse refuses, is set aside as a dead letter and the others land.
// With their ids, the visits of every visitor with a pageview or event in the batch are refreshed around
// those records' times (visits-table.ts in @tally/warehouse), with the records the batch stored and the
// copies of stored records delivered again (same arrival: a crash between the writes is repaired by the
// redelivery); a later copy of a stored record (another arrival) changes nothing, as in events. The
// visitors' visits are kept in memory between batches for as long as the consumer holds their partitions
// (VisitCache), and written only while it still does (the holding's assert, before the write).

import {
  backfillAtStart,
  batchCopies,
  type ConsumerOptions,
  consumeInBatches,
  type Lander,
  landingAfter,
  type Prepared,
  RecordError,
  type RunningBatchLoop,
} from '@tally/consumer';
import { type RecordType, validateRecord } from '@tally/contract';
import { backfillVisits, refreshVisits, VisitCache, type VisitRecord } from '@tally/reports/tables';
import { recordIdRow, type Warehouse } from '@tally/warehouse';
import { type EventRow, eventRow, type IdentityRow, identityRow } from './rows.ts';

export const ANALYTICS_GROUP = 'analytics';
export const ANALYTICS_TOPICS: readonly RecordType[] = ['pageview', 'event', 'identify'];

export type AnalyticsConsumerOptions = ConsumerOptions;

/** A record as a row of the events or the identities table. */
export type AnalyticsRow = { table: 'events'; row: EventRow } | { table: 'identities'; row: IdentityRow };

export function analyticsLander(warehouse: Warehouse): Lander<AnalyticsRow> {
  // The visits of the visitors this consumer holds, between batches (good for one holding of its partitions).
  const visits = new VisitCache();
  return {
    prepare({ record }) {
      const checked = validateRecord(record);
      if (!checked.ok) throw new RecordError('contract', checked.message);
      if (record.type === 'pageview' || record.type === 'event')
        return { table: 'events', row: eventRow(record) };
      if (record.type === 'identify') return { table: 'identities', row: identityRow(record) };
      throw new RecordError('type', `the analytics consumer does not land ${record.type} records`);
    },
    async land(items, holding) {
      visits.sync(holding?.id ?? 0);
      const { fresh, redelivered } = await batchCopies(warehouse, items);
      // The rows first, then (side by side) their ids and the visits: an id is never stored before its row
      // (a crash between them is repaired by the redelivery, which finds the row's id absent), and the
      // visits of a record stored without its id yet are folded again from the redelivered copy.
      const events: EventRow[] = [];
      const identities: IdentityRow[] = [];
      for (const { row } of fresh) {
        if (row.table === 'events') events.push(row.row);
        else identities.push(row.row);
      }
      await Promise.all([warehouse.insert('events', events), warehouse.insert('identities', identities)]);
      await Promise.all([
        warehouse.insert(
          'record_ids',
          fresh.map((i) => recordIdRow(i.message.record)),
        ),
        refreshVisits(warehouse, visitRecords([...fresh, ...redelivered]), {
          beforeWrite: holding?.assert,
          cache: visits,
        }),
      ]);
    },
  };
}

type Item = Prepared<AnalyticsRow>;

/**
 * Per project, the records of the batch that belong in visits: pageviews and custom events (not a bot's)
 * stored by this batch, and copies of stored records delivered again (the same arrival).
 */
function visitRecords(items: readonly Item[]): Map<string, VisitRecord[]> {
  const out = new Map<string, VisitRecord[]>();
  for (const item of items) {
    if (item.row.table !== 'events' || item.row.row.is_bot) continue;
    const project = item.message.record.project_id;
    const records = out.get(project);
    if (records) records.push(visitRecordOf(item.row.row));
    else out.set(project, [visitRecordOf(item.row.row)]);
  }
  return out;
}

/** An events row as the fold of visits reads it. */
function visitRecordOf(row: EventRow): VisitRecord {
  return {
    id: row.id,
    type: row.type,
    timestamp: row.timestamp,
    visitor_id: row.visitor_id,
    path: row.path,
    hostname: row.hostname,
    referrer: row.referrer,
    referrer_source: row.referrer_source,
    referrer_medium: row.referrer_medium,
    utm_source: row.utm_source,
    utm_medium: row.utm_medium,
    utm_campaign: row.utm_campaign,
    utm_term: row.utm_term,
    utm_content: row.utm_content,
    country: row.country,
    region: row.region,
    city: row.city,
    browser: row.browser,
    os: row.os,
    device_type: row.device_type,
    screen_width: row.screen_width,
    event_name: row.event_name,
    event_data: row.event_data,
  };
}

export function startAnalyticsConsumer(options: AnalyticsConsumerOptions): RunningBatchLoop {
  const group = options.group ?? ANALYTICS_GROUP;
  const consumer = options.log.consumer({ group, topics: ANALYTICS_TOPICS });
  const backfill = backfillAtStart('visits', () => backfillVisits(options.warehouse), options.logger);
  const lander = analyticsLander(options.warehouse);
  const loop = consumeInBatches({
    ...options.batch,
    group,
    consumer,
    deadLetters: options.log.deadLetters,
    lander: landingAfter(backfill, lander),
    logger: options.logger,
    metrics: options.metrics,
    progress: options.progress?.group(group),
    onLanded: (messages, setAside, durationMs) =>
      options.logger?.info(
        { records: messages.length, set_aside: setAside.length, duration_ms: durationMs },
        'analytics batch landed',
      ),
  });
  return {
    done: loop.done.finally(() => consumer.close()),
    stop: async () => {
      await loop.stop();
      await backfill.settled();
    },
  };
}
