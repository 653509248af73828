// The revenue views' attributes of a customer (plan, interval, coupon, source, campaign, payment_processor,
// any metadata.<key>) and their filters, in the traffic views' syntax (../traffic/filters.ts):
// `filters=plan==pro|business;metadata.team!=internal`.
//
// A customer's attribute in a period is the value on its latest revenue record up to the period's end that
// has one (latest by the record's own timestamp, then transaction_id: the same answer whatever order or
// how often records were delivered), of any currency; '(none)' when no record has it. So every customer is
// in exactly one group of a dimension, and a filter keeps or drops whole customers. MRR is a per-customer
// fold (period.ts), so the figures of the kept customers' records are exactly those customers'
// share of the unfiltered figures: the groups of a dimension, filtered one by one, add up to the whole.
import type { QueryParams, Warehouse } from '@tally/warehouse';
import { parseFilterList, type TrafficFilter } from '../traffic/filters.ts';
import type { MrrInput } from './ledger.ts';
import { RevenueQueryError } from './scope.ts';

/** The dimensions of revenue breakdowns and filters besides `metadata.<key>`. */
export const REVENUE_DIMENSIONS = [
  'plan',
  'interval',
  'coupon',
  'source',
  'campaign',
  'payment_processor',
] as const;
export const METADATA_PREFIX = 'metadata.';
/** The group of a customer none of whose records has the attribute. */
export const NO_ATTRIBUTE = '(none)';

/** A metadata key as the warehouse stores it (Map(String, String)); long keys are not metadata keys. */
const MAX_KEY_LENGTH = 200;

export type RevenueFilter = TrafficFilter;

/** Checks a dimension (`plan`, …, `metadata.<key>`); throws RevenueQueryError, never quoting it. */
export function checkRevenueDimension(by: string): void {
  if ((REVENUE_DIMENSIONS as readonly string[]).includes(by)) return;
  const key = by.startsWith(METADATA_PREFIX) ? by.slice(METADATA_PREFIX.length) : '';
  if (key === '' || key.length > MAX_KEY_LENGTH)
    throw new RevenueQueryError(`by must be one of ${REVENUE_DIMENSIONS.join(', ')}, metadata.<key>`);
}

/** Parses the revenue views' `filters` parameter (FilterSyntaxError when bad: the dashboard's 400). */
export function parseRevenueFilters(text: string | undefined): RevenueFilter[] {
  const filters = parseFilterList(text, {
    keyPrefix: METADATA_PREFIX,
    dimensions: REVENUE_DIMENSIONS,
    help: `one of ${REVENUE_DIMENSIONS.join(', ')}, metadata.<key>`,
  });
  for (const f of filters) checkRevenueDimension(f.dimension);
  return filters;
}

/** The SQL of a dimension's value on one record ('' when the record has none). */
function valueSql(dimension: string, param: string): string {
  if (dimension === 'payment_processor') return 'payment_processor';
  return `metadata[{${param}:String}]`;
}
const metadataKey = (dimension: string) =>
  dimension.startsWith(METADATA_PREFIX) ? dimension.slice(METADATA_PREFIX.length) : dimension;

/**
 * Each customer's value of each dimension (NO_ATTRIBUTE when none), over the project's revenue records
 * before `until` (ms; all when undefined): dimension → customer → value.
 */
export async function readCustomerAttributes(
  warehouse: Warehouse,
  options: { project: string; dimensions: readonly string[]; until?: number | undefined },
): Promise<Map<string, Map<string, string>>> {
  const dimensions = [...new Set(options.dimensions)];
  const result = new Map<string, Map<string, string>>(dimensions.map((d) => [d, new Map()]));
  if (dimensions.length === 0) return result;
  const params: QueryParams = { project: options.project };
  if (options.until !== undefined) params.until = options.until;
  const columns = dimensions.map((d, i) => {
    params[`k${i}`] = metadataKey(d);
    const value = valueSql(d, `k${i}`);
    return `argMaxIf(${value}, tuple(timestamp, transaction_id), ${value} != '') AS v${i}`;
  });
  const rows = await warehouse.query<Record<string, string>>(
    `SELECT customer_id AS customer, ${columns.join(', ')}
     FROM revenue_records
     WHERE project_id = {project:String}
       ${options.until !== undefined ? "AND timestamp < fromUnixTimestamp64Milli({until:Int64}, 'UTC')" : ''}
     GROUP BY customer_id`,
    params,
  );
  for (const row of rows) {
    dimensions.forEach((d, i) => {
      result.get(d)?.set(row.customer as string, row[`v${i}`] || NO_ATTRIBUTE);
    });
  }
  return result;
}

/** Whether a value matches a filter (contains is case-sensitive, as the traffic views' LIKE). */
function matches(filter: RevenueFilter, value: string): boolean {
  const contains = filter.operator === '~=' || filter.operator === '!~';
  const hit = contains ? filter.values.some((v) => value.includes(v)) : filter.values.includes(value);
  return filter.operator === '!=' || filter.operator === '!~' ? !hit : hit;
}

/** Whether a customer passes every filter, given the attributes readCustomerAttributes read. */
export function customerMatches(
  filters: readonly RevenueFilter[],
  attributes: ReadonlyMap<string, ReadonlyMap<string, string>>,
  customer: string,
): boolean {
  return filters.every((f) => matches(f, attributes.get(f.dimension)?.get(customer) ?? NO_ATTRIBUTE));
}

/**
 * The records of the customers that pass `filters` (the records themselves when there are none), with
 * attributes as of `until` (ms; the period's end).
 */
export async function filterRevenueRecords(
  warehouse: Warehouse,
  records: readonly MrrInput[],
  options: { project: string; filters: readonly RevenueFilter[]; until?: number | undefined },
): Promise<readonly MrrInput[]> {
  if (options.filters.length === 0) return records;
  const attributes = await readCustomerAttributes(warehouse, {
    project: options.project,
    dimensions: options.filters.map((f) => f.dimension),
    until: options.until,
  });
  const kept = new Map<string, boolean>();
  return records.filter((r) => {
    let keep = kept.get(r.customer_id);
    if (keep === undefined) {
      keep = customerMatches(options.filters, attributes, r.customer_id);
      kept.set(r.customer_id, keep);
    }
    return keep;
  });
}

/** The metadata keys of a project's revenue records (the app offers them as breakdown dimensions). */
export async function readRevenueMetadataKeys(warehouse: Warehouse, project: string): Promise<string[]> {
  const rows = await warehouse.query<{ key: string }>(
    `SELECT DISTINCT key FROM revenue_metadata WHERE project_id = {project:String} ORDER BY key LIMIT 200`,
    { project },
  );
  return rows.map((r) => r.key);
}
