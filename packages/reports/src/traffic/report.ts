// The traffic overview of one project over a range of days (both ends included) in the project's time zone,
// for `tally report traffic`: pageviews, unique visitors, sessions (as the tracker sent them), the
// dashboard's visits, custom events and identified customers, with the top paths, referrer sources,
// campaigns and event names. Read from the views (FINAL: no redelivered duplicate counts; no bots); the
// visits are the dashboard's figure (summary.ts).

import type { Warehouse } from '@tally/warehouse';
import { addDays } from '../calendar.ts';
import { checkRange } from './scope.ts';
import { trafficFigures } from './summary.ts';

export interface TrafficReport {
  project: string;
  from: string;
  to: string;
  /** The project's time zone, in which the days are. */
  time_zone: string;
  pageviews: number;
  visitors: number;
  sessions: number;
  /** Visits that start in the range, as the dashboard counts them (docs/traffic.md). */
  visits: number;
  events: number;
  /** Distinct customers that visitors of the range were identified as. */
  customers: number;
  days: { day: string; pageviews: number; visitors: number; sessions: number; events: number }[];
  paths: { path: string; pageviews: number; visitors: number }[];
  referrer_sources: { referrer_source: string; pageviews: number; visitors: number }[];
  campaigns: {
    utm_source: string;
    utm_medium: string;
    utm_campaign: string;
    pageviews: number;
    visitors: number;
  }[];
  event_names: { event_name: string; events: number; visitors: number }[];
}

export async function trafficReport(
  warehouse: Warehouse,
  options: {
    project: string;
    from: string;
    to: string;
    limit?: number | undefined;
    timeZone?: string | undefined;
  },
): Promise<TrafficReport> {
  const timeZone = options.timeZone ?? 'UTC';
  checkRange(options.from, options.to);
  const params = {
    project: options.project,
    tz: timeZone,
    start: `${options.from} 00:00:00`,
    end: `${addDays(options.to, 1)} 00:00:00`,
    limit: options.limit ?? 10,
  };
  const range = `project_id = {project:String}
      AND timestamp >= toDateTime64({start:String}, 3, {tz:String})
      AND timestamp < toDateTime64({end:String}, 3, {tz:String})`;
  const [totals] = await warehouse.query<{
    pageviews: number;
    events: number;
    visitors: number;
    sessions: number;
    customers: number;
  }>(
    `SELECT countIf(type = 'pageview') AS pageviews, countIf(type = 'event') AS events,
            uniqExact(visitor_id) AS visitors, uniqExact(session_id) AS sessions,
            uniqExactIf(customer_id, customer_id != '') AS customers
     FROM events_attributed WHERE ${range} AND NOT is_bot`,
    params,
  );
  // Per day of the time zone, as the traffic_daily view gives them per UTC day.
  const days = await warehouse.query<TrafficReport['days'][number]>(
    `SELECT toString(toDate(timestamp, {tz:String})) AS day, countIf(type = 'pageview') AS pageviews,
            countIf(type = 'event') AS events, uniqExact(visitor_id) AS visitors,
            uniqExact(session_id) AS sessions
     FROM events FINAL WHERE ${range} AND NOT is_bot
     GROUP BY day ORDER BY day`,
    params,
  );
  const { visits } = await trafficFigures(warehouse, { ...options, timeZone, filters: [] });
  const paths = await warehouse.query<TrafficReport['paths'][number]>(
    `SELECT path, count() AS pageviews, uniqExact(visitor_id) AS visitors FROM pageviews
     WHERE ${range} GROUP BY path ORDER BY pageviews DESC, path LIMIT {limit:UInt32}`,
    params,
  );
  const sources = await warehouse.query<TrafficReport['referrer_sources'][number]>(
    `SELECT referrer_source, count() AS pageviews, uniqExact(visitor_id) AS visitors FROM pageviews
     WHERE ${range} GROUP BY referrer_source ORDER BY pageviews DESC, referrer_source LIMIT {limit:UInt32}`,
    params,
  );
  const campaigns = await warehouse.query<TrafficReport['campaigns'][number]>(
    `SELECT utm_source, utm_medium, utm_campaign, count() AS pageviews, uniqExact(visitor_id) AS visitors
     FROM pageviews WHERE ${range} AND (utm_source != '' OR utm_medium != '' OR utm_campaign != '')
     GROUP BY utm_source, utm_medium, utm_campaign
     ORDER BY pageviews DESC, utm_source, utm_medium, utm_campaign LIMIT {limit:UInt32}`,
    params,
  );
  const eventNames = await warehouse.query<TrafficReport['event_names'][number]>(
    `SELECT event_name, count() AS events, uniqExact(visitor_id) AS visitors FROM custom_events
     WHERE ${range} GROUP BY event_name ORDER BY events DESC, event_name LIMIT {limit:UInt32}`,
    params,
  );
  return {
    project: options.project,
    from: options.from,
    to: options.to,
    time_zone: timeZone,
    pageviews: totals?.pageviews ?? 0,
    visitors: totals?.visitors ?? 0,
    sessions: totals?.sessions ?? 0,
    visits,
    events: totals?.events ?? 0,
    customers: totals?.customers ?? 0,
    days,
    paths,
    referrer_sources: sources,
    campaigns,
    event_names: eventNames,
  };
}
