// How pageview, event and identify records become rows of the events and identities tables
// (schemas/clickhouse/001_events.sql, 002_identities.sql). Absent optional strings become ''; fields the
// contract does not list (other than utm_term and utm_content, which have columns) are kept as JSON.
import { stringMap } from '@tally/consumer';
import { EventPayload, IdentifyPayload, type IngestRecordOf, PageviewPayload } from '@tally/contract';
import type { RowOf } from '@tally/warehouse';
import { describeUserAgent, hostnameOf, referrerOf } from './enrichment.ts';

/** The columns of events (001_events.sql, country and screen_width from 007_visits.sql, region and city from 011_regions.sql). */
export const EVENT_COLUMNS = {
  project_id: 'String',
  type: 'String',
  id: 'String',
  timestamp: 'DateTime64',
  received_at: 'DateTime64',
  client_timestamp: 'Nullable(DateTime64)',
  timestamp_clamped: 'Bool',
  visitor_id: 'String',
  visitor_id_derived: 'Bool',
  session_id: 'String',
  event_name: 'String',
  event_data: 'Map(String, String)',
  url: 'String',
  hostname: 'String',
  path: 'String',
  referrer: 'String',
  referrer_source: 'String',
  referrer_medium: 'String',
  title: 'String',
  locale: 'String',
  country: 'String',
  region: 'String',
  city: 'String',
  screen_width: 'UInt16',
  utm_source: 'String',
  utm_medium: 'String',
  utm_campaign: 'String',
  utm_term: 'String',
  utm_content: 'String',
  browser: 'String',
  browser_version: 'String',
  os: 'String',
  os_version: 'String',
  device_type: 'String',
  is_bot: 'Bool',
  user_agent: 'String',
  extra: 'String',
} as const;

/** A row of events: a pageview or a custom event. */
export type EventRow = Omit<RowOf<typeof EVENT_COLUMNS>, 'type'> & { type: 'pageview' | 'event' };

/** The columns of identities (002_identities.sql). */
export const IDENTITY_COLUMNS = {
  project_id: 'String',
  id: 'String',
  timestamp: 'DateTime64',
  received_at: 'DateTime64',
  visitor_id: 'String',
  visitor_id_derived: 'Bool',
  session_id: 'String',
  customer_id: 'String',
  user_agent: 'String',
  extra: 'String',
} as const;

export type IdentityRow = RowOf<typeof IDENTITY_COLUMNS>;

const text = (value: unknown): string =>
  value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);

const COLUMNS_OUTSIDE_CONTRACT = ['utm_term', 'utm_content'];

/** The payload's fields that the contract does not list, as JSON ('' when there are none). */
function extraFields(data: object, known: readonly string[]): string {
  const extra = Object.entries(data).filter(
    ([key]) => !known.includes(key) && !COLUMNS_OUTSIDE_CONTRACT.includes(key),
  );
  return extra.length ? JSON.stringify(Object.fromEntries(extra)) : '';
}

const PAGEVIEW_FIELDS = Object.keys(PageviewPayload.properties);
const EVENT_FIELDS = Object.keys(EventPayload.properties);
const IDENTIFY_FIELDS = Object.keys(IdentifyPayload.properties);

export function eventRow(record: IngestRecordOf<'pageview'> | IngestRecordOf<'event'>): EventRow {
  const data: Readonly<Record<string, unknown>> = record.data;
  const url = text(data.url);
  return {
    project_id: record.project_id,
    type: record.type,
    id: record.id,
    timestamp: record.timestamp,
    received_at: record.received_at,
    client_timestamp: record.client_timestamp,
    timestamp_clamped: record.timestamp_clamped,
    visitor_id: text(data.visitor_fingerprint),
    visitor_id_derived: record.visitor_fingerprint_derived,
    session_id: text(data.session_id),
    event_name: record.type === 'event' ? text(data.event_name) : '',
    event_data: record.type === 'event' ? stringMap(data.event_data) : {},
    url,
    hostname: hostnameOf(url),
    path: text(data.path) || pathOf(url),
    referrer: text(data.referrer),
    ...referrerOf(text(data.referrer), url, text(data.referrer_source)),
    title: text(data.title),
    locale: text(data.locale),
    country: record.country ?? '',
    region: record.region ?? '',
    city: record.city ?? '',
    screen_width: record.type === 'pageview' ? screenWidth(data.screen_width) : 0,
    utm_source: text(data.utm_source),
    utm_medium: text(data.utm_medium),
    utm_campaign: text(data.utm_campaign),
    utm_term: text(data.utm_term),
    utm_content: text(data.utm_content),
    ...describeUserAgent(record.user_agent),
    user_agent: record.user_agent ?? '',
    extra: extraFields(data, record.type === 'pageview' ? PAGEVIEW_FIELDS : EVENT_FIELDS),
  };
}

export function identityRow(record: IngestRecordOf<'identify'>): IdentityRow {
  const data: Readonly<Record<string, unknown>> = record.data;
  return {
    project_id: record.project_id,
    id: record.id,
    timestamp: record.timestamp,
    received_at: record.received_at,
    visitor_id: text(data.visitor_fingerprint),
    visitor_id_derived: record.visitor_fingerprint_derived,
    session_id: text(data.session_id),
    customer_id: text(data.customer_id),
    user_agent: record.user_agent ?? '',
    extra: extraFields(data, IDENTIFY_FIELDS),
  };
}

/** The screen width as its UInt16 column holds it (0: not sent); the contract bounds it already. */
function screenWidth(value: unknown): number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 && value <= 65535 ? value : 0;
}

/** The path of a URL when the client sent a URL without a path field. */
function pathOf(url: string): string {
  if (!url) return '';
  try {
    return new URL(url).pathname;
  } catch {
    return '';
  }
}
