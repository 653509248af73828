// Visits as docs/traffic.md defines them, folded from stored records: the pageviews and custom events of one
// visitor in one project with no gap of 30 minutes or more between them (computed here, never taken from
// the client's session_id). A pure function of the records: the same records in any order, or with copies,
// give the same visits, which is what keeps the visits table exact under redelivery (visits-table.ts).
// A stored visit can be turned back into records (recordsOfVisit) that fold to the same visit, its entry
// attributes carried by its first record, so that a visit can be extended or joined by new records
// without reading the visitor's records again.
import { channelOf, sourceOf } from './channels.ts';
import { screenSizeOf } from './dimensions.ts';

/** A new visit starts after this long without a record. */
export const VISIT_GAP_MS = 30 * 60 * 1000;

/** A pageview or custom event as the visits are folded from it (a row of events, bots left out). */
export interface VisitRecord {
  id: string;
  type: 'pageview' | 'event';
  /** Event time in ms since the Unix epoch. */
  timestamp: number;
  visitor_id: string;
  path: string;
  hostname: string;
  referrer: string;
  referrer_source: string;
  referrer_medium: string;
  utm_source: string;
  utm_medium: string;
  utm_campaign: string;
  utm_term: string;
  utm_content: string;
  country: string;
  region: string;
  city: string;
  browser: string;
  os: string;
  device_type: string;
  screen_width: number;
  event_name: string;
  event_data: Record<string, string>;
  /** A stored visit's entry attributes, on the first record rebuilt from it (they are not re-derived). */
  entry?: EntryAttributes;
}

/** What a visit takes from its entry pageview (or first record). */
export interface EntryAttributes {
  hostname: string;
  source: string;
  referrer: string;
  channel: string;
  utm_source: string;
  utm_medium: string;
  utm_campaign: string;
  utm_term: string;
  utm_content: string;
  country: string;
  region: string;
  city: string;
  browser: string;
  os: string;
  device_type: string;
  screen_size: string;
}

export interface Visit {
  visitor_id: string;
  /** Time of its first and last record, in ms. */
  start: number;
  end: number;
  pageviews: number;
  events: number;
  /** Exactly one pageview and no custom event. */
  is_bounce: boolean;
  /** Last minus first record time (0 for a bounce). */
  duration_ms: number;
  /** Path of its first and last pageview ('' without pageviews). */
  entry_path: string;
  exit_path: string;
  // Attributes of the entry pageview (of the first record when the visit has no pageview).
  hostname: string;
  source: string;
  /** The referrer of the entry pageview, host and path only ('' when none or internal). */
  referrer: string;
  channel: string;
  utm_source: string;
  utm_medium: string;
  utm_campaign: string;
  utm_term: string;
  utm_content: string;
  country: string;
  region: string;
  city: string;
  browser: string;
  os: string;
  device_type: string;
  screen_size: string;
  /** Each pageview's record id, time and path, in time order. */
  pageview_ids: string[];
  pageview_times: number[];
  pageview_paths: string[];
  /** Each custom event's record id, time, name and properties, in time order. */
  event_ids: string[];
  event_times: number[];
  event_names: string[];
  event_data: Record<string, string>[];
}

/** Records in a fixed order: time, then pageviews before events at the same millisecond, then id. */
export function compareRecords(a: VisitRecord, b: VisitRecord): number {
  return (
    a.timestamp - b.timestamp ||
    (a.type === b.type ? 0 : a.type === 'pageview' ? -1 : 1) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

/** The visits of the given records (of one or several visitors), each visitor's in time order. */
export function visitsOf(records: readonly VisitRecord[]): Visit[] {
  // One copy per record id: a redelivered copy counts once.
  const unique = new Map<string, VisitRecord>();
  for (const record of records) if (!unique.has(record.id)) unique.set(record.id, record);
  const byVisitor = new Map<string, VisitRecord[]>();
  for (const record of unique.values()) {
    const list = byVisitor.get(record.visitor_id);
    if (list) list.push(record);
    else byVisitor.set(record.visitor_id, [record]);
  }
  const visits: Visit[] = [];
  for (const visitor of [...byVisitor.keys()].sort()) {
    const list = (byVisitor.get(visitor) as VisitRecord[]).sort(compareRecords);
    let current: VisitRecord[] = [];
    for (const record of list) {
      const last = current.at(-1);
      if (last && record.timestamp - last.timestamp >= VISIT_GAP_MS) {
        visits.push(visitOf(current));
        current = [];
      }
      current.push(record);
    }
    if (current.length) visits.push(visitOf(current));
  }
  return visits;
}

/** The entry attributes of a record that starts a visit: carried over, or derived from the record. */
function entryOf(entry: VisitRecord, pageviews: readonly VisitRecord[]): EntryAttributes {
  if (entry.entry) return entry.entry;
  const origin = {
    referrer_source: entry.referrer_source,
    referrer_medium: entry.referrer_medium,
    utm_source: entry.utm_source,
    utm_medium: entry.utm_medium,
    utm_campaign: entry.utm_campaign,
  };
  return {
    hostname: entry.hostname,
    source: sourceOf(origin),
    referrer: entry.referrer_source ? referrerShown(entry.referrer) : '',
    channel: channelOf(origin),
    utm_source: entry.utm_source,
    utm_medium: entry.utm_medium,
    utm_campaign: entry.utm_campaign,
    utm_term: entry.utm_term,
    utm_content: entry.utm_content,
    country: entry.country,
    region: entry.region,
    city: entry.city,
    browser: entry.browser,
    os: entry.os,
    device_type: entry.device_type,
    screen_size: screenSizeOf(pageviews[0] === entry ? entry.screen_width : 0),
  };
}

/** One visit of its records, in order. */
function visitOf(records: VisitRecord[]): Visit {
  const first = records[0] as VisitRecord;
  const last = records.at(-1) as VisitRecord;
  const pageviews = records.filter((r) => r.type === 'pageview');
  const events = records.filter((r) => r.type === 'event');
  return {
    visitor_id: first.visitor_id,
    start: first.timestamp,
    end: last.timestamp,
    pageviews: pageviews.length,
    events: events.length,
    is_bounce: pageviews.length === 1 && events.length === 0,
    duration_ms: last.timestamp - first.timestamp,
    entry_path: pageviews[0]?.path ?? '',
    exit_path: pageviews.at(-1)?.path ?? '',
    ...entryOf(pageviews[0] ?? first, pageviews),
    pageview_ids: pageviews.map((r) => r.id),
    pageview_times: pageviews.map((r) => r.timestamp),
    pageview_paths: pageviews.map((r) => r.path),
    event_ids: events.map((r) => r.id),
    event_times: events.map((r) => r.timestamp),
    event_names: events.map((r) => r.event_name),
    event_data: events.map((r) => r.event_data),
  };
}

const EMPTY_DATA: Record<string, string> = Object.freeze({}) as Record<string, string>;

/** A record rebuilt from a stored visit: what the fold reads of it, its other attributes blank. */
function storedRecord(
  visitor_id: string,
  id: string,
  type: 'pageview' | 'event',
  timestamp: number,
  path: string,
  event_name: string,
  event_data: Record<string, string>,
): VisitRecord {
  return {
    id,
    type,
    timestamp,
    visitor_id,
    path,
    hostname: '',
    referrer: '',
    referrer_source: '',
    referrer_medium: '',
    utm_source: '',
    utm_medium: '',
    utm_campaign: '',
    utm_term: '',
    utm_content: '',
    country: '',
    region: '',
    city: '',
    browser: '',
    os: '',
    device_type: '',
    screen_width: 0,
    event_name,
    event_data,
  };
}

/**
 * A stored visit as records that fold back to it: its pageviews and events with their ids, times, paths,
 * names and properties; its entry attributes on its entry record. Attributes of other records are not
 * kept, and are never needed: when visits join, the entry of the whole is the earliest of their entries.
 */
export function recordsOfVisit(visit: Visit): VisitRecord[] {
  // Built field by field, every record of the one shape (a spread of a template per record was most of a
  // consumer's time: visits are folded again at every batch that reaches them).
  const records: VisitRecord[] = [];
  const { visitor_id } = visit;
  for (let i = 0; i < visit.pageview_ids.length; i++) {
    records.push(
      storedRecord(
        visitor_id,
        visit.pageview_ids[i] as string,
        'pageview',
        visit.pageview_times[i] as number,
        visit.pageview_paths[i] as string,
        '',
        EMPTY_DATA,
      ),
    );
  }
  for (let i = 0; i < visit.event_ids.length; i++) {
    records.push(
      storedRecord(
        visitor_id,
        visit.event_ids[i] as string,
        'event',
        visit.event_times[i] as number,
        '',
        visit.event_names[i] as string,
        visit.event_data[i] as Record<string, string>,
      ),
    );
  }
  records.sort(compareRecords);
  const entry = records.find((r) => r.type === 'pageview') ?? records[0];
  if (entry) {
    entry.entry = {
      hostname: visit.hostname,
      source: visit.source,
      referrer: visit.referrer,
      channel: visit.channel,
      utm_source: visit.utm_source,
      utm_medium: visit.utm_medium,
      utm_campaign: visit.utm_campaign,
      utm_term: visit.utm_term,
      utm_content: visit.utm_content,
      country: visit.country,
      region: visit.region,
      city: visit.city,
      browser: visit.browser,
      os: visit.os,
      device_type: visit.device_type,
      screen_size: visit.screen_size,
    };
  }
  return records;
}

/** A referrer as the dashboard lists it: host and path, without query or fragment (they may hold secrets). */
export function referrerShown(referrer: string): string {
  if (!referrer) return '';
  try {
    const url = new URL(referrer);
    return `${url.host}${url.pathname === '/' ? '' : url.pathname}`;
  } catch {
    return '';
  }
}
