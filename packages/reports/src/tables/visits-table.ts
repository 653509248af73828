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
import { concurrently, crossProjectLookups, type RowOf, type Warehouse } from '@tally/warehouse';
import {
  compareRecords,
  recordsOfVisit,
  VISIT_GAP_MS,
  type Visit,
  type VisitRecord,
  visitsOf,
} from '../traffic/visits.ts';

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
  utm_content, country, region, city, browser, os, device_type, screen_width, event_name, event_data`;

/**
 * The columns of visits the consumer writes (007_visits.sql, region and city from 011_regions.sql;
 * visitor_hash is MATERIALIZED by the table).
 */
export const VISIT_COLUMNS = {
  project_id: 'String',
  visitor_id: 'String',
  start: 'DateTime64',
  end: 'DateTime64',
  pageviews: 'UInt32',
  events: 'UInt32',
  is_bounce: 'Bool',
  duration_ms: 'UInt64',
  entry_path: 'String',
  exit_path: 'String',
  hostname: 'String',
  source: 'String',
  referrer: 'String',
  channel: 'String',
  utm_source: 'String',
  utm_medium: 'String',
  utm_campaign: 'String',
  utm_term: 'String',
  utm_content: 'String',
  country: 'String',
  region: 'String',
  city: 'String',
  browser: 'String',
  os: 'String',
  device_type: 'String',
  screen_size: 'String',
  pageview_ids: 'Array(String)',
  pageview_times: 'Array(DateTime64)',
  pageview_paths: 'Array(String)',
  event_ids: 'Array(String)',
  event_times: 'Array(DateTime64)',
  event_names: 'Array(String)',
  event_data: 'Array(Map(String, String))',
  version: 'UInt64',
  is_deleted: 'UInt8',
} as const;

/** A row of visits: a visit (is_deleted 0), or the key of one that no longer exists (is_deleted 1). */
export type VisitRow = RowOf<typeof VISIT_COLUMNS>;

/** The key columns of a visits row and its deletion mark: what a deleted visit's row needs. */
type DeletedVisitRow = Pick<
  VisitRow,
  'project_id' | 'visitor_id' | 'start' | 'end' | 'version' | 'is_deleted'
>;

/** The columns of visit_durations (010_consumer_state.sql). */
export const VISIT_DURATION_COLUMNS = { project_id: 'String', longest_ms: 'UInt64' } as const;

export type VisitDurationRow = RowOf<typeof VISIT_DURATION_COLUMNS>;

/** A visit as a row of the visits table. */
export function visitRow(project: string, visit: Visit, version: number): VisitRow {
  return { project_id: project, ...visit, version, is_deleted: 0 };
}

const STORED_VISIT_COLUMNS = `visitor_id, toUnixTimestamp64Milli(start) AS start_ms, toUnixTimestamp64Milli(end) AS end_ms,
  pageviews, events, is_bounce, duration_ms, entry_path, exit_path, hostname, source, referrer, channel,
  utm_source, utm_medium, utm_campaign, utm_term, utm_content, country, region, city, browser, os, device_type,
  screen_size, pageview_ids, arrayMap(t -> toUnixTimestamp64Milli(t), pageview_times) AS pageview_ms, pageview_paths,
  event_ids, arrayMap(t -> toUnixTimestamp64Milli(t), event_times) AS event_ms, event_names, event_data`;

type StoredVisit = Omit<Visit, 'start' | 'end' | 'pageview_times' | 'event_times'> & {
  start_ms: number;
  end_ms: number;
  pageview_ms: number[];
  event_ms: number[];
};

/**
 * The visits of the visitors a consumer holds, kept in memory between batches so that the stored visits
 * are read once per visitor, not at every batch (the read of visits FINAL was most of a batch's time, and
 * grew with the day's visits). Exact only while this consumer alone writes these visitors' visits, which
 * the record log's partitioning by visitor gives one holding of the partitions at a time: `sync(holding)`
 * forgets everything when the holding changes (a rebalance; another member may have written meanwhile).
 * An entry is every stored visit of the visitor ending after `from`: complete from there on, since every
 * visit of it written since was written here and put here too. Bounded by the records its visits hold
 * (least recently used visitors leave first; a visitor that left is read again when it comes back).
 */
export class VisitCache {
  readonly #entries = new Map<string, { from: number; visits: Visit[]; size: number }>();
  /** The longest visit each project recorded in visit_durations, as last read or written here (ms). */
  readonly #longest = new Map<string, number>();
  readonly #maxRecords: number;
  #records = 0;
  #holding: number | null = null;

  constructor(maxRecords = 1_000_000) {
    this.#maxRecords = maxRecords;
  }

  /** Forgets every visitor when the consumer's holding of its partitions changed. */
  sync(holding: number): void {
    if (holding === this.#holding) return;
    this.#holding = holding;
    this.#entries.clear();
    this.#longest.clear();
    this.#records = 0;
  }

  /** The longest visit `project` is known to have recorded, or undefined. */
  longest(project: string): number | undefined {
    return this.#longest.get(project);
  }

  /** `project` has recorded a longest visit of at least `ms`. */
  recordedLongest(project: string, ms: number): void {
    this.#longest.set(project, Math.max(ms, this.#longest.get(project) ?? 0));
  }

  /**
   * The stored visits of a visitor ending after `from` (a time at or before `lowest`), when every one of
   * them is known here; else undefined.
   */
  visitsAfter(key: string, lowest: number): { from: number; visits: Visit[] } | undefined {
    const entry = this.#entries.get(key);
    if (!entry || entry.from > lowest) return undefined;
    this.#entries.delete(key); // most recently used last
    this.#entries.set(key, entry);
    return entry;
  }

  /** Every stored visit of the visitor ending after `from` is now `visits`. */
  set(key: string, from: number, visits: Visit[]): void {
    const old = this.#entries.get(key);
    if (old) {
      this.#records -= old.size;
      this.#entries.delete(key);
    }
    const size = visits.reduce((n, v) => n + v.pageviews + v.events, 1);
    this.#entries.set(key, { from, visits, size });
    this.#records += size;
    for (const [oldest, entry] of this.#entries) {
      if (this.#records <= this.#maxRecords) break;
      this.#entries.delete(oldest);
      this.#records -= entry.size;
    }
  }
}

export interface RefreshOptions {
  /**
   * Called right before the visits are written, once they are computed: throws to write nothing (the
   * consumer no longer holds these records' partitions, so another member computes them again).
   */
  beforeWrite?: () => void;
  /** The visits known in memory (the consumer's, for its holding); without it every visitor is read. */
  cache?: VisitCache;
}

/** A visitor's key in the cache. */
const visitorKey = (project: string, visitor: string) => `${project}\n${visitor}`;

/**
 * Refreshes the visits of the visitors of `records` (per project: pageviews and custom events, bots left
 * out) around their times, for every project of a batch at once. Call it once the records are stored;
 * records already in a visit count once. What it costs does not grow with the table: the visitors the
 * cache knows are not read at all; the others are read once (every visit of theirs ending within reach of
 * their earliest new record: the days from there on, and the project's longest visit before, from
 * visit_durations, a row per project), side by side; and the batch's visits are written in one insert,
 * after the longest visit of a project is recorded, so that no stored visit is longer than the look-back
 * its project announces.
 */
export async function refreshVisits(
  warehouse: Warehouse,
  records: ReadonlyMap<string, readonly VisitRecord[]>,
  options: RefreshOptions = {},
): Promise<number> {
  const { cache } = options;
  const projects = [...records.keys()].filter((p) => (records.get(p)?.length ?? 0) > 0);
  if (projects.length === 0) return 0;
  // Per visitor: its new records, how far back they reach, and its stored visits from there on.
  const visitors: VisitorRefresh[] = [];
  for (const project of projects) {
    for (const [visitor, fresh] of groupByVisitor(records.get(project) ?? [])) {
      const lowest = Math.min(...fresh.map((r) => r.timestamp)) - VISIT_GAP_MS;
      const key = visitorKey(project, visitor);
      const known = cache?.visitsAfter(key, lowest);
      visitors.push({ project, visitor, key, fresh, lowest, stored: known?.visits, from: known?.from });
    }
  }
  const missing = visitors.filter((v) => v.stored === undefined);
  const readLongest = missing.length > 0 ? await readStored(warehouse, missing) : new Map<string, number>();
  // Taken once what the visits are folded from is read: a write that read another's visits has a newer
  // version than it, so it replaces it, even when it began first (two members writing one visitor while
  // its partition moves).
  const version = nextVersion();
  const rows: (VisitRow | DeletedVisitRow)[] = [];
  const longestNow = new Map<string, number>();
  let written = 0;
  for (const v of visitors) {
    const stored = v.stored ?? [];
    // Of the visitor's stored visits, those within 30 minutes of one of its new records. Joining them
    // brings no other within reach: each has a gap of 30 minutes or more on both sides.
    const near = stored.filter((old) =>
      v.fresh.some((r) => r.timestamp > old.start - VISIT_GAP_MS && r.timestamp < old.end + VISIT_GAP_MS),
    );
    // Stored records first: a record already in a visit keeps its stored copy.
    const input = [...near.flatMap(recordsOfVisit), ...[...v.fresh].sort(compareRecords)];
    const folded = visitsOf(input);
    for (const visit of folded) {
      rows.push(visitRow(v.project, visit, version));
      longestNow.set(v.project, Math.max(longestNow.get(v.project) ?? 0, visit.duration_ms));
    }
    const live = new Set(folded.map((visit) => visit.start));
    for (const old of near) {
      if (live.has(old.start)) continue;
      rows.push({
        project_id: v.project,
        visitor_id: v.visitor,
        start: old.start,
        end: old.start,
        version,
        is_deleted: 1,
      });
    }
    v.after = [...stored.filter((old) => !near.includes(old)), ...folded].sort((a, b) => a.start - b.start);
    written += folded.length;
  }
  options.beforeWrite?.();
  // A visit longer than its project's recorded longest is recorded before the visits are written, so that
  // no stored visit is ever longer than the look-back its project announces.
  const recorded = new Map(readLongest);
  for (const project of longestNow.keys()) {
    const known = cache?.longest(project);
    if (known !== undefined) recorded.set(project, Math.max(known, recorded.get(project) ?? 0));
  }
  const unsure = [...longestNow].filter(([project, ms]) => ms > (recorded.get(project) ?? -1));
  if (unsure.length > 0) {
    const stored = await longestVisits(
      warehouse,
      unsure.map(([project]) => project),
    );
    const longer = unsure.filter(([project, ms]) => ms > (stored.get(project) ?? -1));
    if (longer.length > 0) {
      await warehouse.insert(
        'visit_durations',
        longer.map(([project_id, longest_ms]): VisitDurationRow => ({ project_id, longest_ms })),
      );
    }
    for (const [project, ms] of unsure) recorded.set(project, Math.max(ms, stored.get(project) ?? 0));
  }
  if (rows.length > 0) await warehouse.insert('visits', rows);
  if (cache) {
    for (const [project, ms] of recorded) cache.recordedLongest(project, ms);
    for (const v of visitors) cache.set(v.key, v.from ?? v.lowest, v.after ?? []);
  }
  return written;
}

interface VisitorRefresh {
  project: string;
  visitor: string;
  key: string;
  fresh: readonly VisitRecord[];
  /** Earliest time a stored visit must end after to be within reach of a new record. */
  lowest: number;
  /** Its stored visits ending after `from` (the cache's, or read), in start order. */
  stored: Visit[] | undefined;
  /** From when `stored` is complete (at or before `lowest`). */
  from: number | undefined;
  /** Its visits ending after `from` once this refresh is written. */
  after?: Visit[];
}

/**
 * Reads the stored visits of `visitors` (those the cache does not know): in look-ups side by side, each
 * of up to VISITORS_PER_QUERY visitors of any projects (crossProjectLookups), every visit of theirs ending after the look-up's
 * earliest reach, which may start up to its project's longest visit before it (the start bounds are the
 * table's key: the read is of those days). A visit of another project than the one a visitor was asked
 * for is left out. Resolves to the longest visit each of their projects recorded.
 */
async function readStored(warehouse: Warehouse, visitors: VisitorRefresh[]): Promise<Map<string, number>> {
  const longest = await longestVisits(warehouse, [...new Set(visitors.map((v) => v.project))]);
  const byKey = new Map(visitors.map((v) => [v.key, v]));
  const lookups = crossProjectLookups(
    visitors,
    (v) => v.visitor,
    VISITORS_PER_QUERY,
    warehouse.listParameterBytes,
  );
  await concurrently(lookups, LOOKUPS_AT_ONCE, async ({ values, projects, items: chunk }) => {
    // Every visit of theirs ending after `lowest` starts after `earliest`: none is longer than the
    // longest its project recorded, nor so than the longest of the chunk's projects.
    const lowest = Math.min(...chunk.map((v) => v.lowest));
    const earliest = lowest - Math.max(...chunk.map((v) => longest.get(v.project) ?? 0));
    const found = await warehouse.query<StoredVisit & { project_id: string }>(
      `SELECT project_id, ${STORED_VISIT_COLUMNS} FROM (
         SELECT * FROM visits FINAL
         WHERE project_id IN {projects:Array(String)} AND visitor_id IN {visitors:Array(String)}
           AND start >= fromUnixTimestamp64Milli({earliest:Int64}, 'UTC')
           AND end > fromUnixTimestamp64Milli({lowest:Int64}, 'UTC'))
       ORDER BY start`,
      { projects, visitors: values, lowest, earliest },
    );
    for (const v of chunk) {
      v.stored = [];
      v.from = lowest;
    }
    for (const { project_id, start_ms, end_ms, pageview_ms, event_ms, ...rest } of found) {
      // Asked for in this chunk, or not at all: a list holds every project's entries of its visitors.
      const v = byKey.get(visitorKey(project_id, rest.visitor_id));
      if (!v) continue;
      v.stored?.push({
        ...rest,
        start: start_ms,
        end: end_ms,
        pageview_times: pageview_ms,
        event_times: event_ms,
      });
    }
  });
  return longest;
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
        const durations: VisitDurationRow[] = [{ project_id: project, longest_ms: longest }];
        await warehouse.insert('visit_durations', durations);
      }
      const rows = visits.map((v) => visitRow(project, v, version));
      for (let i = 0; i < rows.length; i += 10_000)
        await warehouse.insert('visits', rows.slice(i, i + 10_000));
      written += rows.length;
    }
  }
  return written;
}
