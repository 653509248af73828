// The dashboard's breakdowns: figures per value of a dimension, largest first (docs/traffic.md). Pages and
// custom events (and 404 events, per path) count their records in the range (with the visitors who had
// one); entry and exit pages and the other visit dimensions count the visits that start in the range, with their pageviews, bounce
// rate and mean duration; exit pages also give the exit rate (visits leaving on the page / its pageviews
// in the range). Each row's share is of the dimension's main figure over every value.
import type { QueryParams, Warehouse } from '@tally/warehouse';
import {
  type BreakdownDimension,
  isVisitDimension,
  NOT_FOUND_EVENT,
  VISIT_DIMENSIONS,
} from './dimensions.ts';
import { ratio, type TrafficQuery, trafficScope } from './scope.ts';

export interface BreakdownRow {
  value: string;
  visitors: number;
  visits?: number;
  pageviews?: number;
  events?: number;
  bounce_rate?: number | null;
  visit_duration_s?: number | null;
  exit_rate?: number | null;
  share: number;
}

export interface BreakdownOptions {
  dimension: BreakdownDimension;
  /** For event_property: the property's key. */
  property?: string | undefined;
  limit: number;
  sort?: string | undefined;
  order?: 'asc' | 'desc' | undefined;
}

export interface TrafficBreakdown {
  rows: BreakdownRow[];
  /** The main figure over every value. */
  total: number;
}

export class BreakdownError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BreakdownError';
  }
}

/** The figures each kind of breakdown has; the first is its main figure. */
const COLUMNS = {
  records: ['pageviews', 'visitors'],
  events: ['events', 'visitors'],
  visits: ['visits', 'visitors', 'pageviews', 'bounce_rate', 'visit_duration_s'],
  exits: ['visits', 'visitors', 'exit_rate'],
} as const;

function kindOf(dimension: BreakdownDimension): keyof typeof COLUMNS {
  if (dimension === 'page') return 'records';
  if (dimension === 'event_name' || dimension === 'not_found' || dimension.startsWith('event_property'))
    return 'events';
  if (dimension === 'exit_page') return 'exits';
  return 'visits';
}

/** ORDER BY of a breakdown: the chosen figure (or the main one), then the value, so the order is total. */
function orderBy(
  kind: keyof typeof COLUMNS,
  sort: string | undefined,
  order: 'asc' | 'desc' | undefined,
): string {
  const columns: readonly string[] = COLUMNS[kind];
  const column = sort ?? columns[0];
  if (column !== 'value' && !columns.includes(column as string)) {
    throw new BreakdownError(`this breakdown can be sorted by value, ${columns.join(', ')}`);
  }
  const direction = (order ?? (column === 'value' ? 'asc' : 'desc')).toUpperCase();
  return column === 'value' ? `value ${direction}` : `${column} ${direction}, value ASC`;
}

export async function trafficBreakdown(
  warehouse: Warehouse,
  query: TrafficQuery,
  options: BreakdownOptions,
): Promise<TrafficBreakdown> {
  const scope = trafficScope(query);
  const kind = kindOf(options.dimension);
  const order = orderBy(kind, options.sort, options.order);
  const params: QueryParams = { ...scope.params, limit: options.limit };
  let sql: string;
  if (kind === 'records') {
    sql = `${scope.with}
      SELECT path AS value, count() AS pageviews, uniqExact(visitor_hash) AS visitors, sum(count()) OVER () AS total
      FROM (SELECT visitor_hash, pageview_times, pageview_paths FROM visits FINAL WHERE ${scope.where})
      ARRAY JOIN pageview_times AS t, pageview_paths AS path
      WHERE t >= range_start AND t < range_end
      GROUP BY value ORDER BY ${order} LIMIT {limit:UInt32}`;
  } else if (kind === 'events') {
    let value = 'name';
    let having = '';
    let columns = 'event_times AS t, event_names AS name';
    if (options.dimension === 'event_property') {
      if (!options.property) throw new BreakdownError('event_property needs property=<key>');
      params.property = options.property;
      value = 'data[{property:String}]';
      having = 'AND mapContains(data, {property:String})';
      columns = 'event_times AS t, event_data AS data';
    } else if (options.dimension === 'event_property_key') {
      // The keys the events' properties use: an event counts once under each of its keys.
      value = 'arrayJoin(mapKeys(data))';
      columns = 'event_times AS t, event_data AS data';
    } else if (options.dimension === 'not_found') {
      // The 404 events, per the `path` property the documented call sends (the visits table keeps no
      // path of its own for an event).
      params.notFound = NOT_FOUND_EVENT;
      value = "data['path']";
      having = "AND name = {notFound:String} AND data['path'] != ''";
      columns = 'event_times AS t, event_names AS name, event_data AS data';
    }
    sql = `${scope.with}
      SELECT ${value} AS value, count() AS events, uniqExact(visitor_hash) AS visitors, sum(count()) OVER () AS total
      FROM (SELECT visitor_hash, event_times, event_names, event_data FROM visits FINAL WHERE ${scope.where})
      ARRAY JOIN ${columns}
      WHERE t >= range_start AND t < range_end ${having}
      GROUP BY value ORDER BY ${order} LIMIT {limit:UInt32}`;
  } else {
    if (!isVisitDimension(options.dimension)) throw new BreakdownError('unknown dimension');
    const column = VISIT_DIMENSIONS[options.dimension];
    sql = `${scope.with}
      SELECT ${column} AS value, count() AS visits, uniqExact(visitor_hash) AS visitors, sum(visit_pageviews) AS pageviews,
             countIf(is_bounce) / count() AS bounce_rate, avg(duration_ms) / 1000 AS visit_duration_s,
             0 AS exit_rate, sum(count()) OVER () AS total
      FROM (SELECT *, visitor_hash, pageviews AS visit_pageviews FROM visits FINAL WHERE ${scope.where} AND start >= range_start)
      GROUP BY value ORDER BY ${kind === 'exits' ? order.replace('exit_rate', 'visits') : order} LIMIT {limit:UInt32}`;
  }
  const rows = await warehouse.query<BreakdownRow & { total: number }>(sql, params);
  const total = rows[0]?.total ?? 0;
  const main = COLUMNS[kind][0] as string;
  // Columns in a fixed order (the CSV's): the value, the dimension's figures (main one first), the share.
  const result: BreakdownRow[] = rows.map((row) => {
    const source = row as unknown as Record<string, number>;
    const out: Record<string, unknown> = { value: row.value };
    for (const column of COLUMNS[kind]) out[column] = source[column];
    out.share = ratio(Number(source[main]), total) ?? 0;
    return out as unknown as BreakdownRow;
  });
  if (kind === 'exits') await addExitRates(warehouse, scope, result);
  return { rows: result, total };
}

/** Exit rate of each listed page: visits leaving on it / its pageviews in the range. */
async function addExitRates(
  warehouse: Warehouse,
  scope: ReturnType<typeof trafficScope>,
  rows: BreakdownRow[],
): Promise<void> {
  if (rows.length === 0) return;
  const views = await warehouse.query<{ value: string; pageviews: number }>(
    `${scope.with}
     SELECT path AS value, count() AS pageviews
     FROM (SELECT pageview_times, pageview_paths FROM visits FINAL WHERE ${scope.where} AND hasAny(pageview_paths, {paths:Array(String)}))
     ARRAY JOIN pageview_times AS t, pageview_paths AS path
     WHERE t >= range_start AND t < range_end AND path IN {paths:Array(String)}
     GROUP BY value`,
    { ...scope.params, paths: rows.map((r) => r.value) },
  );
  const byPath = new Map(views.map((v) => [v.value, v.pageviews]));
  for (const row of rows) row.exit_rate = ratio(row.visits ?? 0, byPath.get(row.value) ?? 0);
}
