// Keeps the visits table (schemas/clickhouse/007_visits.sql) equal to the fold of visits.ts over each
// visitor's stored records. A visit is decided by its own records and by the 30-minute gaps around them, so
// after a batch only the visits of the visitors it touched, around the times it touched, can change:
// for each such visitor the span to recompute is the batch's records widened to every stored visit that
// lies within 30 minutes of them (a late record may join two visits, or extend one); outside that span a
// gap of at least 30 minutes separates the visitor's other visits, which stay as they are. The span's
// records are read back from events (FINAL: each record once), folded, and written with a new version;
// the visits of the span that no longer exist are written as deleted. Idempotent: running it again on
// the same records writes the same visits, so a redelivered batch replaces, never adds.
import type { Row, Warehouse } from '../warehouse.ts';
import { compareRecords, VISIT_GAP_MS, type Visit, type VisitRecord, visitsOf } from './visits.ts';

/** Visitors recomputed per query, so that IN lists and reads stay bounded. */
const VISITORS_PER_QUERY = 500;

let lastVersion = 0;
/** Increasing within this process and across restarts (milliseconds × 1000, plus a counter). */
function nextVersion(): number {
  lastVersion = Math.max(lastVersion + 1, Date.now() * 1000);
  return lastVersion;
}

/** The times of a visitor's records that a batch brought (or brought again), in ms. */
export interface TouchedVisitor {
  visitor_id: string;
  first: number;
  last: number;
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

/**
 * Recomputes the visits of `touched` visitors of `project` around the given times. Call it after the
 * batch's records are stored (the version is taken before reading them, so that of two refreshes of one
 * visitor the one that read more records wins).
 */
export async function refreshVisits(
  warehouse: Warehouse,
  project: string,
  touched: readonly TouchedVisitor[],
): Promise<number> {
  let written = 0;
  for (let i = 0; i < touched.length; i += VISITORS_PER_QUERY) {
    written += await refreshChunk(warehouse, project, touched.slice(i, i + VISITORS_PER_QUERY));
  }
  return written;
}

async function refreshChunk(
  warehouse: Warehouse,
  project: string,
  touched: readonly TouchedVisitor[],
): Promise<number> {
  const version = nextVersion();
  const visitors = touched.map((t) => t.visitor_id);
  const lowest = Math.min(...touched.map((t) => t.first)) - VISIT_GAP_MS;
  const highest = Math.max(...touched.map((t) => t.last)) + VISIT_GAP_MS;
  // The stored visits near the batch's records: they widen each visitor's span.
  const found = await warehouse.query<{ visitor_id: string; start_ms: number; end_ms: number }>(
    // In ms, from a subquery: an alias `start` beside the WHERE would hide the column from it.
    `SELECT visitor_id, toUnixTimestamp64Milli(start) AS start_ms, toUnixTimestamp64Milli(end) AS end_ms
     FROM (
       SELECT visitor_id, start, end FROM visits FINAL
       WHERE project_id = {project:String} AND visitor_id IN {visitors:Array(String)}
         AND start <= fromUnixTimestamp64Milli({highest:Int64}, 'UTC')
         AND start >= fromUnixTimestamp64Milli({lowest:Int64}, 'UTC') - toIntervalMillisecond(
               (SELECT max(duration_ms) FROM visits WHERE project_id = {project:String}))
         AND end >= fromUnixTimestamp64Milli({lowest:Int64}, 'UTC'))`,
    { project, visitors, highest, lowest },
  );
  const stored = found.map((v) => ({ visitor_id: v.visitor_id, start: v.start_ms, end: v.end_ms }));
  const spans = new Map<string, { from: number; to: number; old: { start: number; end: number }[] }>();
  for (const t of touched) {
    const span = spans.get(t.visitor_id) ?? { from: t.first, to: t.last, old: [] };
    span.from = Math.min(span.from, t.first);
    span.to = Math.max(span.to, t.last);
    spans.set(t.visitor_id, span);
  }
  for (const visit of stored) {
    const span = spans.get(visit.visitor_id);
    // Within 30 minutes of this visitor's records (the query's bounds are the chunk's, wider).
    if (!span || visit.end <= span.from - VISIT_GAP_MS || visit.start >= span.to + VISIT_GAP_MS) continue;
    span.old.push(visit);
  }
  // The visits found are whole: a gap of 30 minutes or more lies before and after each, so widening the
  // span to them brings no other visit within reach.
  for (const span of spans.values()) {
    for (const visit of span.old) {
      span.from = Math.min(span.from, visit.start);
      span.to = Math.max(span.to, visit.end);
    }
  }
  const from = Math.min(...[...spans.values()].map((s) => s.from));
  const to = Math.max(...[...spans.values()].map((s) => s.to));
  const records = await warehouse.query<VisitRecord>(
    `SELECT ${VISIT_RECORD_COLUMNS} FROM (
       SELECT * FROM events FINAL
       WHERE project_id = {project:String}
         AND timestamp >= fromUnixTimestamp64Milli({from:Int64}, 'UTC')
         AND timestamp <= fromUnixTimestamp64Milli({to:Int64}, 'UTC')
         AND type IN ('pageview', 'event') AND NOT is_bot AND visitor_id IN {visitors:Array(String)})`,
    { project, from, to, visitors },
  );
  const inSpan = records.filter((r) => {
    const span = spans.get(r.visitor_id);
    return span !== undefined && r.timestamp >= span.from && r.timestamp <= span.to;
  });
  inSpan.sort(compareRecords);
  const visits = visitsOf(inSpan);
  const rows: Row[] = visits.map((v) => visitRow(project, v, version));
  const live = new Set(visits.map((v) => `${v.visitor_id}\u0000${v.start}`));
  for (const [visitor, span] of spans) {
    for (const old of span.old) {
      if (live.has(`${visitor}\u0000${old.start}`)) continue;
      rows.push({
        project_id: project,
        visitor_id: visitor,
        start: old.start,
        end: old.start,
        version,
        is_deleted: 1,
      });
    }
  }
  if (rows.length > 0) await warehouse.insert('visits', rows);
  return visits.length;
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
