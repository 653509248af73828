// The columns of each kind of breakdown, as the API gives them (its `sort` accepts exactly these), what each
// list is called, and how a dimension's values read: countries by name with their flag, device types
// capitalised (stored lower-case: filters still send the stored value), empty values as unknown or not set.
import type { BreakdownDimension, BreakdownRow } from '../api/types.ts';
import { formatCount, formatDuration, formatPercent } from '../format.ts';

export type SortKey =
  | 'visitors'
  | 'visits'
  | 'pageviews'
  | 'events'
  | 'bounce_rate'
  | 'visit_duration_s'
  | 'exit_rate';

export interface Column {
  key: SortKey;
  label: string;
  format(row: BreakdownRow): string;
  /** Shown in the panels' short lists (the others only in the details). */
  compact: boolean;
}

const count = (key: 'visitors' | 'visits' | 'pageviews' | 'events') => (row: BreakdownRow) =>
  row[key] === undefined ? '—' : formatCount(row[key] as number);

const VISITORS: Column = { key: 'visitors', label: 'Visitors', format: count('visitors'), compact: true };
const KIND_COLUMNS = {
  records: [{ key: 'pageviews', label: 'Pageviews', format: count('pageviews'), compact: true }, VISITORS],
  events: [{ key: 'events', label: 'Events', format: count('events'), compact: true }, VISITORS],
  visits: [
    { key: 'visits', label: 'Visits', format: count('visits'), compact: true },
    VISITORS,
    { key: 'pageviews', label: 'Pageviews', format: count('pageviews'), compact: false },
    { key: 'bounce_rate', label: 'Bounce rate', format: (r) => formatPercent(r.bounce_rate), compact: false },
    {
      key: 'visit_duration_s',
      label: 'Visit duration',
      format: (r) => formatDuration(r.visit_duration_s),
      compact: false,
    },
  ],
  exits: [
    { key: 'visits', label: 'Exits', format: count('visits'), compact: true },
    VISITORS,
    { key: 'exit_rate', label: 'Exit rate', format: (r) => formatPercent(r.exit_rate), compact: false },
  ],
} satisfies Record<string, Column[]>;

export function columnsOf(dimension: BreakdownDimension): Column[] {
  if (dimension === 'page') return KIND_COLUMNS.records;
  if (dimension === 'event_name' || dimension === 'not_found' || dimension.startsWith('event_property'))
    return KIND_COLUMNS.events;
  if (dimension === 'exit_page') return KIND_COLUMNS.exits;
  return KIND_COLUMNS.visits;
}

/** The figure a row's bar and share are of. */
export const mainColumn = (dimension: BreakdownDimension): Column => columnsOf(dimension)[0] as Column;

export const DIMENSION_LABELS: Record<BreakdownDimension, string> = {
  page: 'Page',
  entry_page: 'Entry page',
  exit_page: 'Exit page',
  channel: 'Channel',
  source: 'Source',
  referrer: 'Referrer',
  utm_source: 'UTM source',
  utm_medium: 'UTM medium',
  utm_campaign: 'UTM campaign',
  utm_term: 'UTM term',
  utm_content: 'UTM content',
  country: 'Country',
  region: 'Region',
  city: 'City',
  browser: 'Browser',
  os: 'Operating system',
  device: 'Device type',
  screen_size: 'Screen size',
  hostname: 'Hostname',
  event_name: 'Event',
  event_property: 'Value',
  event_property_key: 'Property',
  not_found: 'Page not found',
};

/** What a whole list is called (the details dialog's title): the tab names alone would repeat the panel's. */
export function listName(dimension: BreakdownDimension, property?: string): string {
  if (dimension === 'event_property') return property ? `Values of property ${property}` : 'Property values';
  return LIST_NAMES[dimension];
}

const LIST_NAMES: Record<Exclude<BreakdownDimension, 'event_property'>, string> = {
  page: 'Top pages',
  entry_page: 'Entry pages',
  exit_page: 'Exit pages',
  channel: 'Channels',
  source: 'Sources',
  referrer: 'Referrers',
  utm_source: 'UTM sources',
  utm_medium: 'UTM media',
  utm_campaign: 'UTM campaigns',
  utm_term: 'UTM terms',
  utm_content: 'UTM contents',
  country: 'Countries',
  region: 'Regions',
  city: 'Cities',
  browser: 'Browsers',
  os: 'Operating systems',
  device: 'Device types',
  screen_size: 'Screen sizes',
  hostname: 'Hostnames',
  event_name: 'Custom events',
  event_property_key: 'Event property keys',
  not_found: 'Pages not found (404)',
};

let regionNames: Intl.DisplayNames | null | undefined;

/** "🇩🇪 Germany" from "DE"; the code itself where the browser has no name for it. */
export function countryName(code: string): string {
  if (regionNames === undefined) {
    try {
      regionNames = new Intl.DisplayNames(undefined, { type: 'region' });
    } catch {
      regionNames = null;
    }
  }
  let name = code;
  try {
    name = regionNames?.of(code) ?? code;
  } catch {
    // not a region code the browser knows
  }
  return name;
}

export function flagOf(code: string): string {
  if (!/^[A-Z]{2}$/.test(code)) return '';
  return String.fromCodePoint(...[...code].map((c) => 0x1f1e6 + c.charCodeAt(0) - 65));
}

/** How a value reads in a list or a filter chip; '' is a visit without it. */
export function valueLabel(dimension: BreakdownDimension | string, value: string): string {
  if (value === '') {
    if (dimension.startsWith('utm_') || dimension === 'referrer') return '(not set)';
    return '(unknown)';
  }
  if (dimension === 'country') return countryName(value);
  // "Mountain View, California, US" reads with the country's name.
  if (dimension === 'region' || dimension === 'city')
    return value.replace(/, ([A-Z]{2})$/, (_, code: string) => `, ${countryName(code)}`);
  if (dimension === 'device') return value.charAt(0).toUpperCase() + value.slice(1);
  return value;
}
