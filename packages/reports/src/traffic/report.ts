// The traffic report of one project over a range of days (UTC, both ends included): pageviews, unique
// visitors, sessions, custom events and identified customers, with the top paths, referrer sources,
// campaigns and event names. Read from the views (FINAL: no redelivered duplicate counts; no bots).

import type { Warehouse } from '@tally/warehouse';
import { DAY_MS, parseUtcDay } from '../calendar.ts';

export interface TrafficReport {
  project: string;
  from: string;
  to: string;
  pageviews: number;
  visitors: number;
  sessions: number;
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

/** Start of a YYYY-MM-DD day in ms (UTC), `offset` days later (a day past its month's end runs on). */
export function dayStart(day: string, offset = 0): number {
  const ms = parseUtcDay(day);
  if (Number.isNaN(ms)) throw new RangeError(`invalid day "${day}" (expected YYYY-MM-DD)`);
  return ms + offset * DAY_MS;
}

export async function trafficReport(
  warehouse: Warehouse,
  options: { project: string; from: string; to: string; limit?: number },
): Promise<TrafficReport> {
  const params = {
    project: options.project,
    start: dayStart(options.from),
    end: dayStart(options.to, 1),
    limit: options.limit ?? 10,
  };
  const range = `project_id = {project:String}
      AND timestamp >= fromUnixTimestamp64Milli({start:Int64}, 'UTC')
      AND timestamp < fromUnixTimestamp64Milli({end:Int64}, 'UTC')`;
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
  const days = await warehouse.query<TrafficReport['days'][number]>(
    `SELECT day, pageviews, visitors, sessions, events FROM traffic_daily
     WHERE project_id = {project:String}
       AND day >= toDate(fromUnixTimestamp64Milli({start:Int64}, 'UTC'))
       AND day < toDate(fromUnixTimestamp64Milli({end:Int64}, 'UTC'))
     ORDER BY day`,
    params,
  );
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
    pageviews: totals?.pageviews ?? 0,
    visitors: totals?.visitors ?? 0,
    sessions: totals?.sessions ?? 0,
    events: totals?.events ?? 0,
    customers: totals?.customers ?? 0,
    days,
    paths,
    referrer_sources: sources,
    campaigns,
    event_names: eventNames,
  };
}
