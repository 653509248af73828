// The dimensions of the dashboard's traffic figures: what a breakdown lists and what a filter matches, and
// how each is read from the visits table (schemas/clickhouse/007_visits.sql, 011_regions.sql). A visit dimension is an
// attribute of the visit (of its entry pageview: docs/traffic.md); a page or event dimension is one of the
// records inside a visit.

/** Attributes of a visit, one value per visit: a breakdown counts visits, a filter keeps visits. */
export const VISIT_DIMENSIONS = {
  entry_page: 'entry_path',
  exit_page: 'exit_path',
  channel: 'channel',
  source: 'source',
  referrer: 'referrer',
  utm_source: 'utm_source',
  utm_medium: 'utm_medium',
  utm_campaign: 'utm_campaign',
  utm_term: 'utm_term',
  utm_content: 'utm_content',
  country: 'country',
  // A region or city named with what holds it ("Mountain View, California, US"): names repeat across
  // countries (Georgia, London), and a breakdown or filter must not join them.
  region: "if(region = '', '', concat(region, ', ', country))",
  city: "if(city = '', '', concat(city, ', ', if(region = '', '', concat(region, ', ')), country))",
  browser: 'browser',
  os: 'os',
  device: 'device_type',
  screen_size: 'screen_size',
  hostname: 'hostname',
} as const;
export type VisitDimension = keyof typeof VISIT_DIMENSIONS;

/** Every breakdown of GET …/traffic/breakdown/{dimension}. */
export const BREAKDOWN_DIMENSIONS = [
  'page',
  ...(Object.keys(VISIT_DIMENSIONS) as VisitDimension[]),
  'event_name',
  'event_property',
  'event_property_key',
  'not_found',
] as const;
export type BreakdownDimension = (typeof BREAKDOWN_DIMENSIONS)[number];

/** The custom event a site sends from its 404 page, with `path` (and `referrer`) properties: docs/traffic.md. */
export const NOT_FOUND_EVENT = '404';

/** Every dimension a filter may name; `prop:<key>` (an event property) is matched apart. */
export const FILTER_DIMENSIONS = [
  'page',
  ...(Object.keys(VISIT_DIMENSIONS) as VisitDimension[]),
  'event_name',
] as const;
export type FilterDimension = (typeof FILTER_DIMENSIONS)[number];

export const isVisitDimension = (name: string): name is VisitDimension =>
  Object.hasOwn(VISIT_DIMENSIONS, name);

/** Screen size classes from the width the tracker sends (CSS pixels), as Plausible's. */
export function screenSizeOf(width: number | null | undefined): string {
  if (!width) return '';
  if (width < 576) return 'Mobile';
  if (width < 992) return 'Tablet';
  if (width < 1440) return 'Laptop';
  return 'Desktop';
}

/** The channels of GA4's default channel grouping that docs/traffic.md lists, in its order. */
export const CHANNELS = [
  'Direct',
  'Organic Search',
  'Paid Search',
  'Organic Social',
  'Paid Social',
  'Email',
  'Referral',
  'Affiliates',
  'Display',
  'Organic Video',
  'Paid Video',
  'Other',
] as const;
export type Channel = (typeof CHANNELS)[number];

/** The source of a visit without referrer and UTM. */
export const DIRECT_SOURCE = 'Direct / None';
