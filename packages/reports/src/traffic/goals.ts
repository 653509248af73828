// Goals and funnels (docs/traffic.md): a goal is a custom event name or a page path pattern (`*` any
// characters); its conversion rate is the visitors who reached it in the range / the range's unique
// visitors. A funnel is ordered goals reached by one visitor within the range, each after the previous
// one; each step counts the visitors who reached it and every step before it, in order.

import type { QueryParams, Warehouse } from '@tally/warehouse';
import { DAY_MS } from '../calendar.ts';
import { dayNumber, type TrafficQuery, trafficScope } from './scope.ts';

export interface GoalTarget {
  event_name?: string | undefined;
  path?: string | undefined;
}

export interface GoalFigures {
  visitors: number;
  events: number;
}

/** The LIKE pattern of a path goal: `*` is any characters, the rest literal. */
const pathPattern = (path: string) =>
  path
    .split('*')
    .map((part) => part.replace(/[\\%_]/g, (c) => `\\${c}`))
    .join('%');

/**
 * The condition that a path (an SQL expression) matches a path goal, its value set as `param`: equality
 * when the goal has no `*` (LIKE costs about twice as much over every pageview of the range), else LIKE.
 */
function pathMatches(path: string, param: string, params: QueryParams, column: string): string {
  if (!path.includes('*')) {
    params[param] = path;
    return `${column} = {${param}:String}`;
  }
  params[param] = pathPattern(path);
  return `${column} LIKE {${param}:String}`;
}

/** How many of a visit's records in the range reach the goal (an array expression over the visit's row). */
function reached(target: GoalTarget, param: string, params: QueryParams): string {
  if (target.event_name !== undefined) {
    params[param] = target.event_name;
    return `arrayCount((t, n) -> n = {${param}:String} AND t >= range_start AND t < range_end, event_times, event_names)`;
  }
  const matches = pathMatches(target.path ?? '', param, params, 'p');
  return `arrayCount((t, p) -> ${matches} AND t >= range_start AND t < range_end, pageview_times, pageview_paths)`;
}

/** Per goal (in order), the visitors who reached it in the range and how often; and the range's visitors. */
export async function goalConversions(
  warehouse: Warehouse,
  query: TrafficQuery,
  goals: readonly GoalTarget[],
): Promise<{ visitors: number; goals: GoalFigures[] }> {
  const scope = trafficScope(query);
  const params: QueryParams = { ...scope.params };
  // Per visit, how often each goal is reached in the range (array functions on the row, no join).
  const counts = goals.map((goal, i) => `${reached(goal, `g${i}`, params)} AS c${i}`);
  const columns = goals.map((_, i) => `uniqExactIf(visitor_hash, c${i} > 0) AS v${i}, sum(c${i}) AS e${i}`);
  const [row] = await warehouse.query<Record<string, number>>(
    `${scope.with}
     SELECT uniqExactIf(visitor_hash, records > 0) AS visitors ${columns.map((c) => `, ${c}`).join('')}
     FROM (
       SELECT visitor_hash,
              arrayCount(t -> t >= range_start AND t < range_end, arrayConcat(pageview_times, event_times)) AS records
              ${counts.map((c) => `, ${c}`).join('')}
       FROM visits FINAL WHERE ${scope.where}
     )`,
    params,
  );
  return {
    visitors: row?.visitors ?? 0,
    goals: goals.map((_, i) => ({ visitors: row?.[`v${i}`] ?? 0, events: row?.[`e${i}`] ?? 0 })),
  };
}

/** Visitors who reached each step of the funnel (and every step before it, in order) within the range. */
export async function funnelSteps(
  warehouse: Warehouse,
  query: TrafficQuery,
  steps: readonly GoalTarget[],
): Promise<number[]> {
  const scope = trafficScope(query);
  const params: QueryParams = { ...scope.params };
  // Per record, whether it reaches each step: pageviews by their path, events by their name.
  const onPageview = steps.map((step, i) => {
    if (step.event_name !== undefined) return '0';
    return pathMatches(step.path ?? '', `s${i}`, params, 'p');
  });
  const onEvent = steps.map((step, i) => {
    if (step.event_name === undefined) return '0';
    params[`s${i}`] = step.event_name;
    return `n = {s${i}:String}`;
  });
  const inRange = 't >= range_start AND t < range_end';
  const tuple = (conditions: string[]) =>
    `(toUInt64(toUnixTimestamp64Milli(t)), ${conditions.map((c) => `toUInt8(${c})`).join(', ')})`;
  const reachesAny = (conditions: string[]) => conditions.filter((c) => c !== '0').join(' OR ') || '0';
  // The window covers the whole range (a day may have 25 hours): every chain within it counts.
  const windowMs = (dayNumber(query.to) - dayNumber(query.from) + 2) * DAY_MS;
  // Only the records in the range that reach some step take part, as (time, reaches step 1, step 2, …).
  const rows = await warehouse.query<{ level: number; visitors: number }>(
    `${scope.with}
     SELECT level, count() AS visitors FROM (
       SELECT visitor_hash, windowFunnel(${windowMs})(r.1, ${steps.map((_, i) => `r.${i + 2} = 1`).join(', ')}) AS level
       FROM (
         SELECT visitor_hash, arrayJoin(arrayConcat(
                  arrayMap((t, p) -> ${tuple(onPageview)},
                           arrayFilter((t, p) -> ${inRange} AND (${reachesAny(onPageview)}), pageview_times, pageview_paths),
                           arrayFilter((p, t) -> ${inRange} AND (${reachesAny(onPageview)}), pageview_paths, pageview_times)),
                  arrayMap((t, n) -> ${tuple(onEvent)},
                           arrayFilter((t, n) -> ${inRange} AND (${reachesAny(onEvent)}), event_times, event_names),
                           arrayFilter((n, t) -> ${inRange} AND (${reachesAny(onEvent)}), event_names, event_times)))) AS r
         FROM visits FINAL WHERE ${scope.where}
       )
       GROUP BY visitor_hash
     )
     WHERE level > 0 GROUP BY level`,
    params,
  );
  return steps.map((_, i) => rows.filter((r) => r.level >= i + 1).reduce((sum, r) => sum + r.visitors, 0));
}
