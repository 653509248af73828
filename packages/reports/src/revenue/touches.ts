// The customers' first and last touches that attribution groups them by (the rules are attribution.ts's):
// read for every customer of a project, or for a few (touches-cache.ts keeps them per project and reads
// again the customers whose inputs changed), and attributionKey, a customer's group by one of its touches.
import type { QueryParams, Warehouse } from '@tally/warehouse';
import type { AttributionDimension, Touch } from './scope.ts';

export const UNATTRIBUTED = '(unattributed)';
/** The group of a touch whose dimension is empty (a visit without a campaign). */
export const NO_VALUE = '(none)';

/** One visit as a touch: its acquisition attributes (those of its entry pageview). */
export interface Touchpoint {
  visitor_id: string;
  /** When the visit started (ms). */
  start: number;
  channel: string;
  source: string;
  utm_source: string;
  utm_medium: string;
  utm_campaign: string;
  entry_path: string;
}

export interface CustomerTouches {
  first: Touchpoint;
  /** null when no linked visit started before the customer's first revenue record. */
  last: Touchpoint | null;
}

type TouchTuple = [string, string | number, string, string, string, string, string, string];

const touchOf = (t: TouchTuple): Touchpoint => ({
  visitor_id: t[0],
  start: Number(t[1]),
  channel: t[2],
  source: t[3],
  utm_source: t[4],
  utm_medium: t[5],
  utm_campaign: t[6],
  entry_path: t[7],
});

/** The visitors linked to each customer of a project (identify records and revenue records). */
export const LINKED_VISITORS_SQL = `
  SELECT customer_id, visitor_id FROM visitor_customers
  WHERE project_id = {project:String} AND customer_id != ''
  UNION DISTINCT
  SELECT customer_id, visitor_id FROM revenue_records
  WHERE project_id = {project:String} AND visitor_id != ''`;

const TOUCH_TUPLE = `tuple(v.visitor_id, toUnixTimestamp64Milli(v.start), v.channel, v.source, v.utm_source,
  v.utm_medium, v.utm_campaign, v.entry_path)`;

/** First and last touch of every customer of `project` that has a linked visit. */
export async function readCustomerTouches(
  warehouse: Warehouse,
  project: string,
  customers?: readonly string[],
): Promise<Map<string, CustomerTouches>> {
  const only = customers ? 'AND customer_id IN {customers:Array(String)}' : '';
  const params: QueryParams = { project };
  let linked = `SELECT * FROM (${LINKED_VISITORS_SQL}) WHERE 1 ${only}`;
  let visits = 'visits FINAL WHERE project_id = {project:String}';
  let revenue = 'revenue_records';
  if (customers) {
    // For a few customers (the touches cache's refresh) the same rows, read from less. Their linked
    // visitors first (the same SQL), then only those visitors' visits and only the revenue of transactions
    // with a stored row of these customers (every copy of such a transaction, so FINAL keeps the same
    // one, and every kept row of theirs is among them). PREWHERE on key columns (visitor_id;
    // transaction_id) leaves the other rows out before FINAL's merge, which is exact because it keeps or
    // drops every row of a key together.
    params.customers = [...customers];
    revenue = `(SELECT * FROM revenue FINAL
      PREWHERE project_id = {project:String} AND transaction_id IN
        (SELECT transaction_id FROM revenue WHERE project_id = {project:String} ${only}))`;
    // visitor_customers (schemas/clickhouse/002_identities.sql) for these customers only: a visitor whose
    // latest identify names one of them has a raw identities row naming it, so the view's own argMax over
    // just those visitors' rows (PREWHERE on the key column visitor_id) gives the same pairs, without
    // grouping every identified visitor of the project.
    const pairs = await warehouse.query<{ customer_id: string; visitor_id: string }>(
      `SELECT customer_id, visitor_id FROM
       (
         SELECT visitor_id, argMax(customer_id, (timestamp, received_at, id)) AS customer_id
         FROM identities FINAL
         PREWHERE project_id = {project:String} AND visitor_id IN
           (SELECT visitor_id FROM identities
            WHERE project_id = {project:String} AND visitor_id != '' ${only})
         GROUP BY visitor_id
       )
       WHERE customer_id != '' ${only}
       UNION DISTINCT
       SELECT customer_id, visitor_id FROM ${revenue}
       WHERE project_id = {project:String} AND visitor_id != '' ${only}`,
      params,
    );
    if (pairs.length === 0) return new Map();
    params.linked_customers = pairs.map((p) => p.customer_id);
    params.linked_visitors = pairs.map((p) => p.visitor_id);
    linked = `SELECT p.1 AS customer_id, p.2 AS visitor_id
      FROM (SELECT arrayJoin(arrayZip({linked_customers:Array(String)}, {linked_visitors:Array(String)})) AS p)`;
    visits = `visits FINAL
      PREWHERE project_id = {project:String} AND visitor_id IN {linked_visitors:Array(String)}`;
  }
  const rows = await warehouse.query<{
    customer: string;
    first_touch: TouchTuple;
    last_touch: TouchTuple;
    before_payment: number | string;
  }>(
    `SELECT l.customer_id AS customer,
            argMin(${TOUCH_TUPLE}, tuple(v.start, v.visitor_id)) AS first_touch,
            argMaxIf(${TOUCH_TUPLE}, tuple(v.start, v.visitor_id), v.start < f.first_revenue) AS last_touch,
            countIf(v.start < f.first_revenue) AS before_payment
     FROM
     (
       SELECT visitor_id, start, channel, source, utm_source, utm_medium, utm_campaign, entry_path
       FROM ${visits}
     ) AS v
     INNER JOIN (${linked}) AS l ON l.visitor_id = v.visitor_id
     LEFT JOIN
     (
       SELECT customer_id, min(timestamp) AS first_revenue FROM ${revenue}
       WHERE project_id = {project:String} ${only} GROUP BY customer_id
     ) AS f ON f.customer_id = l.customer_id
     GROUP BY l.customer_id`,
    params,
  );
  const touches = new Map<string, CustomerTouches>();
  for (const row of rows) {
    touches.set(row.customer, {
      first: touchOf(row.first_touch),
      last: Number(row.before_payment) > 0 ? touchOf(row.last_touch) : null,
    });
  }
  return touches;
}

/** The group of a customer in a breakdown by `by` of its `touch`. */
export function attributionKey(
  touches: CustomerTouches | undefined,
  by: AttributionDimension,
  touch: Touch,
): string {
  const point = touch === 'first' ? touches?.first : touches?.last;
  if (!point) return UNATTRIBUTED;
  return point[by] || NO_VALUE;
}
