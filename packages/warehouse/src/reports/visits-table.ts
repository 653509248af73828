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
import { concurrently } from '../concurrently.ts';
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

/** Visitors looked up per query at most; the size of the list's parameter bounds it first (parameter-lists.ts). */
const VISITORS_PER_QUERY = 5000;
/** Look-ups of one batch in flight at once. */
const LOOKUPS_AT_ONCE = 4;

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

export interface RefreshOptions {
  /**
   * Called right before the visits are written, once they are computed: throws to write nothing (the
   * consumer no longer holds these records' partitions, so another member computes them again).
   */
  beforeWrite?: () => void;
}

/**
 * Refreshes the visits of the visitors of `records` (per project: pageviews and custom events, bots left
 * out) around their times, for every project of a batch at once. Call it once the records are stored;
 * records already in a visit count once. What it costs does not grow with the table: each look-up reads the
 * days of its records (and the project's longest visit before them, from visit_durations, a row per
 * project), the look-ups run side by side, and the batch's visits are written in one insert, after the
 * longest visit of a project is recorded, so that no stored visit is longer than the look-back its project
 * announces.
 */
export async function refreshVisits(
  warehouse: Warehouse,
  records: ReadonlyMap<string, readonly VisitRecord[]>,
  options: RefreshOptions = {},
): Promise<number> {
  const projects = [...records.keys()].filter((p) => (records.get(p)?.length ?? 0) > 0);
  if (projects.length === 0) return 0;
  const longest = await longestVisits(warehouse, projects);
  const version = nextVersion();
  const lookups = projects.flatMap((project) => {
    const byVisitor = groupByVisitor(records.get(project) ?? []);
    return parameterLists([...byVisitor.keys()], VISITORS_PER_QUERY).map((visitors) => ({
      project,
      byVisitor: new Map(visitors.map((v) => [v, byVisitor.get(v) as VisitRecord[]])),
    }));
  });
  const folded = await concurrently(lookups, LOOKUPS_AT_ONCE, ({ project, byVisitor }) =>
    foldAgain(warehouse, project, byVisitor, longest.get(project) ?? 0, version),
  );
  const grown = new Map<string, number>();
  for (const f of folded) {
    if (f.longest > Math.max(longest.get(f.project) ?? 0, grown.get(f.project) ?? 0))
      grown.set(f.project, f.longest);
  }
  options.beforeWrite?.();
  if (grown.size > 0) {
    await warehouse.insert(
      'visit_durations',
      [...grown].map(([project_id, longest_ms]) => ({ project_id, longest_ms })),
    );
  }
  const rows = folded.flatMap((f) => f.rows);
  if (rows.length > 0) await warehouse.insert('visits', rows);
  return folded.reduce((n, f) => n + f.visits, 0);
}

function groupByVisitor<T extends { visitor_id: string }>(items: readonly T[]): Map<string, T[]> {
  const byVisitor = new Map<string, T[]>();
  for (const item of items) {
    const list = byVisitor.get(item.visitor_id);
    if (list) list.push(item);
    else byVisitor.set(item.visitor_id, [item]);
  }
  return byVisitor;
}

/** The longest visit each project has stored (ms): how long before a record a visit reaching it may start. */
async function longestVisits(
  warehouse: Warehouse,
  projects: readonly string[],
): Promise<Map<string, number>> {
  const rows = await warehouse.query<{ project_id: string; longest: number }>(
    `SELECT project_id, max(longest_ms) AS longest FROM visit_durations
     WHERE project_id IN {projects:Array(String)} GROUP BY project_id`,
    { projects },
  );
  return new Map(rows.map((r) => [r.project_id, Number(r.longest)]));
}

/** The visits of these visitors around their new records, folded again with them, as rows to write. */
async function foldAgain(
  warehouse: Warehouse,
  project: string,
  newByVisitor: ReadonlyMap<string, readonly VisitRecord[]>,
  longestMs: number,
  version: number,
): Promise<{ project: string; rows: Row[]; visits: number; longest: number }> {
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const list of newByVisitor.values()) {
    for (const { timestamp } of list) {
      first = Math.min(first, timestamp);
      last = Math.max(last, timestamp);
    }
  }
  const lowest = first - VISIT_GAP_MS;
  const highest = last + VISIT_GAP_MS;
  // The stored visits that may reach a record of these visitors: starting before the last record's reach
  // and at most the project's longest visit before the first's, ending after the first's reach. The start
  // bounds are the table's key, so the read is of those days only.
  const found = await warehouse.query<StoredVisit>(
    `SELECT ${VISIT_COLUMNS} FROM (
       SELECT * FROM visits FINAL
       WHERE project_id = {project:String} AND visitor_id IN {visitors:Array(String)}
         AND start < fromUnixTimestamp64Milli({highest:Int64}, 'UTC')
         AND start >= fromUnixTimestamp64Milli({earliest:Int64}, 'UTC')
         AND end > fromUnixTimestamp64Milli({lowest:Int64}, 'UTC'))`,
    { project, visitors: [...newByVisitor.keys()], highest, lowest, earliest: lowest - longestMs },
  );
  const storedByVisitor = groupByVisitor(found);
  const rows: Row[] = [];
  let visits = 0;
  let longest = 0;
  for (const [visitor, fresh] of newByVisitor) {
    // Of the visitor's stored visits, those within 30 minutes of one of its new records (the query's bounds
    // are the look-up's, wider). Joining them brings no other within reach: each has a gap of 30 minutes or
    // more on both sides.
    const near = (storedByVisitor.get(visitor) ?? []).filter((v) =>
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
    const folded = visitsOf(input);
    for (const visit of folded) {
      rows.push(visitRow(project, visit, version));
      longest = Math.max(longest, visit.duration_ms);
    }
    const live = new Set(folded.map((v) => v.start));
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
    visits += folded.length;
  }
  return { project, rows, visits, longest };
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
      const visits = visitsOf(records);
      const longest = visits.reduce((max, v) => Math.max(max, v.duration_ms), 0);
      if (visits.length > 0) {
        // As refreshVisits does: the longest visit recorded before the visits are.
        await warehouse.insert('visit_durations', [{ project_id: project, longest_ms: longest }]);
      }
      const rows = visits.map((v) => visitRow(project, v, version));
      for (let i = 0; i < rows.length; i += 10_000)
        await warehouse.insert('visits', rows.slice(i, i + 10_000));
      written += rows.length;
    }
  }
  return written;
}
