// Keeps the visits table (schemas/clickhouse/007_visits.sql) equal to the fold of visits.ts over each
// visitor's stored records. A visit is decided by its own records and by the 30-minute gaps around them, so
// a batch can only change the visits of its visitors within 30 minutes of its records: for each visitor,
// the stored visits that reach within 30 minutes of the batch's records are read back as records
// (recordsOfVisit: their pageviews and events with ids, their entry attributes), folded again together
// with the batch's records, and written with a new version; a stored visit that no longer exists (two
// visits joined) is written as deleted. Beyond a gap of 30 minutes nothing can change. No record is read
// from events: a refresh costs a look-up of the batch's visitors in visits, whatever the traffic of the
// day. Idempotent: the same records folded again give the same visits (a record id counts once), so a
// redelivered batch replaces, never adds.
import { parameterLists } from '../parameter-lists.ts';
import type { Row, Warehouse } from '../warehouse.ts';
import {
  compareRecords,
  recordsOfVisit,
  VISIT_GAP_MS,
  type Visit,
  type VisitRecord,
  visitsOf,
} from './visits.ts';

/** Visitors refreshed per query at most, so that IN lists stay bounded (and their size: parameter-lists.ts). */
const VISITORS_PER_QUERY = 500;

let lastVersion = 0;
/** Increasing within this process and across restarts (milliseconds × 1000, plus a counter). */
function nextVersion(): number {
  lastVersion = Math.max(lastVersion + 1, Date.now() * 1000);
  return lastVersion;
}

/** The columns of events the fold reads, as VisitRecord fields (select them from a subquery: the alias
 * `timestamp` would hide the column from a WHERE beside it). */
export const VISIT_RECORD_COLUMNS = `id, type, toUnixTimestamp64Milli(timestamp) AS timestamp, visitor_id, path,
  hostname, referrer, referrer_source, referrer_medium, utm_source, utm_medium, utm_campaign, utm_term,
  utm_content, country, browser, os, device_type, screen_width, event_name, event_data`;

/** A visit as a row of the visits table. */
export function visitRow(project: string, visit: Visit, version: number): Row {
  return { project_id: project, ...visit, version, is_deleted: 0 };
}

const VISIT_COLUMNS = `visitor_id, toUnixTimestamp64Milli(start) AS start_ms, toUnixTimestamp64Milli(end) AS end_ms,
  pageviews, events, is_bounce, duration_ms, entry_path, exit_path, hostname, source, referrer, channel,
  utm_source, utm_medium, utm_campaign, utm_term, utm_content, country, browser, os, device_type, screen_size,
  pageview_ids, arrayMap(t -> toUnixTimestamp64Milli(t), pageview_times) AS pageview_ms, pageview_paths,
  event_ids, arrayMap(t -> toUnixTimestamp64Milli(t), event_times) AS event_ms, event_names, event_data`;

type StoredVisit = Omit<Visit, 'start' | 'end' | 'pageview_times' | 'event_times'> & {
  start_ms: number;
  end_ms: number;
  pageview_ms: number[];
  event_ms: number[];
};

/**
 * Refreshes the visits of the visitors of `records` (pageviews and custom events of `project`, bots left
 * out) around their times. Call it once the records are stored; records already in a visit count once.
 */
export async function refreshVisits(
  warehouse: Warehouse,
  project: string,
  records: readonly VisitRecord[],
): Promise<number> {
  const byVisitor = new Map<string, VisitRecord[]>();
  for (const record of records) {
    const list = byVisitor.get(record.visitor_id);
    if (list) list.push(record);
    else byVisitor.set(record.visitor_id, [record]);
  }
  let written = 0;
  for (const chunk of parameterLists([...byVisitor.keys()], VISITORS_PER_QUERY)) {
    written += await refreshChunk(
      warehouse,
      project,
      chunk.flatMap((v) => byVisitor.get(v) ?? []),
    );
  }
  return written;
}

async function refreshChunk(
  warehouse: Warehouse,
  project: string,
  records: readonly VisitRecord[],
): Promise<number> {
  const version = nextVersion();
  const visitors = [...new Set(records.map((r) => r.visitor_id))];
  const times = records.map((r) => r.timestamp);
  const lowest = Math.min(...times) - VISIT_GAP_MS;
  const highest = Math.max(...times) + VISIT_GAP_MS;
  // The stored visits that may reach a record of the batch; the project's longest visit bounds how far
  // back one may start, which keeps the read to a few days of the table's key.
  const found = await warehouse.query<StoredVisit>(
    `SELECT ${VISIT_COLUMNS} FROM (
       SELECT * FROM visits FINAL
       WHERE project_id = {project:String} AND visitor_id IN {visitors:Array(String)}
         AND start < fromUnixTimestamp64Milli({highest:Int64}, 'UTC')
         AND start >= fromUnixTimestamp64Milli({lowest:Int64}, 'UTC') - toIntervalMillisecond(
               (SELECT max(duration_ms) FROM visits WHERE project_id = {project:String}))
         AND end > fromUnixTimestamp64Milli({lowest:Int64}, 'UTC'))`,
    { project, visitors, highest, lowest },
  );
  const newByVisitor = new Map<string, VisitRecord[]>();
  for (const record of records) {
    const list = newByVisitor.get(record.visitor_id);
    if (list) list.push(record);
    else newByVisitor.set(record.visitor_id, [record]);
  }
  const rows: Row[] = [];
  let written = 0;
  for (const [visitor, fresh] of newByVisitor) {
    // Of the visitor's stored visits, those within 30 minutes of one of its new records (the query's bounds
    // are the chunk's, wider). Joining them brings no other within reach: each has a gap of 30 minutes or
    // more on both sides.
    const near = found
      .filter((v) => v.visitor_id === visitor)
      .filter((v) =>
        fresh.some((r) => r.timestamp > v.start_ms - VISIT_GAP_MS && r.timestamp < v.end_ms + VISIT_GAP_MS),
      );
    const stored: Visit[] = near.map(({ start_ms, end_ms, pageview_ms, event_ms, ...rest }) => ({
      ...rest,
      start: start_ms,
      end: end_ms,
      pageview_times: pageview_ms,
      event_times: event_ms,
    }));
    // Stored records first: a record already in a visit keeps its stored copy.
    const input = [...stored.flatMap(recordsOfVisit), ...[...fresh].sort(compareRecords)];
    const visits = visitsOf(input);
    for (const visit of visits) rows.push(visitRow(project, visit, version));
    const live = new Set(visits.map((v) => v.start));
    for (const old of stored) {
      if (live.has(old.start)) continue;
      rows.push({
        project_id: project,
        visitor_id: visitor,
        start: old.start,
        end: old.start,
        version,
        is_deleted: 1,
      });
    }
    written += visits.length;
  }
  if (rows.length > 0) await warehouse.insert('visits', rows);
  return written;
}

/**
 * Fills the visits table from the stored events when it is empty but events is not (a warehouse migrated
 * from before the table existed): per project, the visitors in slices by a hash of their id, each slice's
 * records folded at once. Resolves to the number of visits written (0 if nothing to do).
 */
export async function backfillVisits(warehouse: Warehouse, slices = 16): Promise<number> {
  const [visits] = await warehouse.query<{ n: number }>('SELECT count() AS n FROM visits');
  if ((visits?.n ?? 0) > 0) return 0;
  const projects = await warehouse.query<{ project_id: string }>(
    "SELECT DISTINCT project_id FROM events WHERE type IN ('pageview', 'event')",
  );
  let written = 0;
  for (const { project_id: project } of projects) {
    for (let slice = 0; slice < slices; slice++) {
      const records = await warehouse.query<VisitRecord>(
        `SELECT ${VISIT_RECORD_COLUMNS} FROM (
           SELECT * FROM events FINAL
           WHERE project_id = {project:String} AND type IN ('pageview', 'event') AND NOT is_bot
             AND cityHash64(visitor_id) % {slices:UInt32} = {slice:UInt32})`,
        { project, slices, slice },
      );
      const version = nextVersion();
      const rows = visitsOf(records).map((v) => visitRow(project, v, version));
      for (let i = 0; i < rows.length; i += 10_000)
        await warehouse.insert('visits', rows.slice(i, i + 10_000));
      written += rows.length;
    }
  }
  return written;
}
