// What a traffic view shows, read from and written to the page's query string, so that every view can be
// bookmarked and shared: `?period=custom&from=2025-03-01&to=2025-03-31&filters=channel==Email&metric=visits`.
// Defaults are left out of the URL.
import type { Compare, Interval } from '../api/types.ts';
import { type Filter, parseFilters, serializeFilters } from './filters.ts';
import {
  type DayRange,
  DEFAULT_PERIOD,
  defaultInterval,
  intervalsFor,
  PERIODS,
  type Period,
  resolveRange,
} from './range.ts';

/** The figures the time series can draw (the top figures other than current visitors). */
export type Metric =
  | 'visitors'
  | 'visits'
  | 'pageviews'
  | 'views_per_visit'
  | 'bounce_rate'
  | 'visit_duration_s'
  | 'events';
export const METRICS: Metric[] = [
  'visitors',
  'visits',
  'pageviews',
  'views_per_visit',
  'bounce_rate',
  'visit_duration_s',
  'events',
];

export interface ViewState {
  period: Period;
  /** The custom range as asked (only with period custom). */
  custom: { from?: string; to?: string };
  filters: Filter[];
  interval?: Interval;
  compare: Compare;
  metric: Metric;
}

const COMPARES: Compare[] = ['previous', 'year', 'none'];

export function readViewState(query: Record<string, string>): ViewState {
  const period = PERIODS.some((p) => p.id === query.period) ? (query.period as Period) : DEFAULT_PERIOD;
  const state: ViewState = {
    period,
    custom: {},
    filters: parseFilters(query.filters),
    compare: COMPARES.includes(query.compare as Compare) ? (query.compare as Compare) : 'previous',
    metric: METRICS.includes(query.metric as Metric) ? (query.metric as Metric) : 'visitors',
  };
  if (period === 'custom') {
    if (query.from) state.custom.from = query.from;
    if (query.to) state.custom.to = query.to;
  }
  if (query.interval && ['hour', 'day', 'week', 'month'].includes(query.interval))
    state.interval = query.interval as Interval;
  return state;
}

export function viewSearch(state: ViewState): string {
  const params = new URLSearchParams();
  if (state.period !== DEFAULT_PERIOD) params.set('period', state.period);
  if (state.period === 'custom') {
    if (state.custom.from) params.set('from', state.custom.from);
    if (state.custom.to) params.set('to', state.custom.to);
  }
  if (state.filters.length > 0) params.set('filters', serializeFilters(state.filters));
  if (state.interval) params.set('interval', state.interval);
  if (state.compare !== 'previous') params.set('compare', state.compare);
  if (state.metric !== 'visitors') params.set('metric', state.metric);
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** The range and interval the API is asked for, in the project's time zone (`today` is its today). */
export function resolveView(state: ViewState, today: string): { range: DayRange; interval: Interval } {
  const range = resolveRange(state.period, today, state.custom);
  const allowed = intervalsFor(range);
  const interval =
    state.interval && allowed.includes(state.interval) ? state.interval : defaultInterval(range);
  return { range, interval };
}

/** The query parameters every traffic request of the view carries. */
export function rangeParams(range: DayRange, filters: Filter[]): Record<string, string> {
  const params: Record<string, string> = { from: range.from, to: range.to };
  if (filters.length > 0) params.filters = serializeFilters(filters);
  return params;
}
