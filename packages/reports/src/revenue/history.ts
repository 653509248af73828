// The stored revenue history as the MRR ledger (ledger.ts) reads it: a project's revenue records, one per
// transaction_id (revenue_records), in the order of the fold, read in one query as compact tuples.
// history-cache.ts keeps it per project and refreshes it by what changed; a cached history is frozen, and
// what is folded from it is kept as long as it lives (memoOnFrozen, kept), that of a refreshed history
// derived from the earlier one's by folding the changed customers again (recordHistoryChange).
import { toMicros } from '@tally/contract';
import type { QueryParams, Warehouse } from '@tally/warehouse';
import type { MrrInput } from './ledger.ts';

/**
 * One stored record as readMrrInputs reads it: a tuple (JSON array) in the order of the query's tuple, so
 * that a history of hundreds of thousands of records travels as one compact array instead of as as many
 * JSON objects, each repeating every column's name. Money as decimal text; mrr_impact '' when NULL.
 */
type StoredRevenueTuple = [
  id: string,
  transaction_id: string,
  customer_id: string,
  customer_subscription_id: string,
  event_type: string,
  currency: string,
  amount: string,
  mrr_impact: string,
  mrr_impact_null: number | boolean,
  is_recurring: boolean | null,
  interval: string,
  timestamp_ms: number | string,
  received_at_ms: number | string,
  bucket?: number | string,
];

/**
 * The project's revenue records (one per transaction_id) up to `until` (ms, default: all), of one
 * currency or all, of some customers or all, as the MRR rules read them, in the order of the fold.
 */
export async function readMrrInputs(
  warehouse: Warehouse,
  options: {
    project: string;
    until?: number | undefined;
    currency?: string | undefined;
    customers?: readonly string[] | undefined;
  },
): Promise<MrrInput[]> {
  return (await readStoredHistory(warehouse, options)).records;
}

/**
 * readMrrInputs, and with `buckets` each record's bucket (cityHash64(transaction_id) % buckets), of only
 * the records of the buckets `only` when given: history-cache.ts re-reads just the buckets whose stored
 * rows changed. Every copy of one transaction is in one bucket, so a bucket's records are the same as
 * the whole read's records of that bucket (revenue_records keeps one copy per project and transaction_id).
 */
export async function readStoredHistory(
  warehouse: Warehouse,
  options: {
    project: string;
    until?: number | undefined;
    currency?: string | undefined;
    customers?: readonly string[] | undefined;
    buckets?: number | undefined;
    only?: readonly number[] | undefined;
  },
): Promise<{ records: MrrInput[]; buckets: number[] }> {
  const params: QueryParams = { project: options.project };
  if (options.until !== undefined) params.until = options.until;
  if (options.currency) params.currency = options.currency;
  if (options.customers) params.customers = [...options.customers];
  if (options.buckets !== undefined) params.buckets = options.buckets;
  if (options.only) params.only = [...options.only];
  const bucket = 'cityHash64(transaction_id) % {buckets:UInt32}';
  const [row] = await warehouse.query<{ records: StoredRevenueTuple[] }>(
    `SELECT ${historyArray(options.buckets !== undefined ? `, ${bucket}` : '')} AS records
     FROM revenue_records
     WHERE project_id = {project:String}
       ${options.until !== undefined ? "AND timestamp < fromUnixTimestamp64Milli({until:Int64}, 'UTC')" : ''}
       ${options.currency ? 'AND currency = {currency:String}' : ''}
       ${options.customers ? 'AND customer_id IN {customers:Array(String)}' : ''}
       ${options.buckets !== undefined && options.only ? `AND ${bucket} IN {only:Array(UInt32)}` : ''}`,
    params,
  );
  const records = row?.records ?? [];
  const inputs = new Array<MrrInput>(records.length);
  const buckets = options.buckets !== undefined ? new Array<number>(records.length) : [];
  for (let i = 0; i < records.length; i++) {
    const r = records[i] as StoredRevenueTuple;
    inputs[i] = mrrInputOf(r);
    if (options.buckets !== undefined) buckets[i] = Number(r[13]);
  }
  return { records: inputs, buckets };
}

/**
 * The stored records of some customers of several projects at once, as readMrrInputs reads one project's
 * (`customers` is every pair asked for): one statement instead of one per project, where a connection runs
 * one statement at a time (chDB). The statement reads `project_id IN … AND customer_id IN …`, a cross
 * product; the records of a customer that its project did not ask for are left out. Callers cut the
 * customers into lists (crossProjectLookups in @tally/warehouse).
 */
export async function readMrrInputsOfCustomers(
  warehouse: Warehouse,
  customers: readonly { project: string; customer: string }[],
): Promise<Map<string, MrrInput[]>> {
  const asked = new Set(customers.map(({ project, customer }) => `${project}\u0000${customer}`));
  const rows = await warehouse.query<{ project: string; records: StoredRevenueTuple[] }>(
    `SELECT project_id AS project, ${historyArray('')} AS records
     FROM revenue_records
     WHERE project_id IN {projects:Array(String)} AND customer_id IN {customers:Array(String)}
     GROUP BY project_id`,
    {
      projects: [...new Set(customers.map((c) => c.project))],
      customers: [...new Set(customers.map((c) => c.customer))],
    },
  );
  const byProject = new Map<string, MrrInput[]>();
  for (const { project, records } of rows) {
    const inputs: MrrInput[] = [];
    for (const r of records) if (asked.has(`${project}\u0000${r[2]}`)) inputs.push(mrrInputOf(r));
    if (inputs.length > 0) byProject.set(project, inputs);
  }
  return byProject;
}

/**
 * The records of a history read as one array sorted in the order of the fold (by timestamp, received_at,
 * transaction_id: the order of groupArray itself is not defined when the engine reads with several
 * threads), each a StoredRevenueTuple; `more` adds columns after the tuple's own.
 */
function historyArray(more: string): string {
  return `arraySort(r -> (r.12, r.13, r.2), groupArray((
              id, transaction_id, customer_id, customer_subscription_id, event_type, currency,
              toString(amount), toString(ifNull(mrr_impact, 0)), isNull(mrr_impact), is_recurring,
              metadata['interval'], toUnixTimestamp64Milli(timestamp), toUnixTimestamp64Milli(received_at)
              ${more}
            )))`;
}

function mrrInputOf(r: StoredRevenueTuple): MrrInput {
  return {
    transaction_id: r[1],
    id: r[0],
    customer_id: r[2],
    customer_subscription_id: r[3],
    event_type: r[4] as MrrInput['event_type'],
    currency: r[5],
    amount: toMicros(r[6]),
    mrr_impact: r[8] === true || r[8] === 1 ? null : toMicros(r[7]),
    is_recurring: r[9],
    interval: r[10],
    timestamp: Number(r[11]),
    received_at: Number(r[12]),
  };
}

/**
 * How a frozen history was made from the one before it (history-cache.ts refreshes the cached history by
 * re-reading only what changed): the customers any of whose records were added, removed or replaced, and
 * those customers' records in the earlier history and in this one (each in the fold's order). The MRR
 * fold's state is per customer (its subscriptions, its MRR, whether it ever paid), so every other
 * customer's part of a fold is the same in both histories: a fold of the new history is the earlier fold
 * with the changed customers' parts folded again from `after`.
 */
export interface HistoryChange {
  previous: readonly MrrInput[];
  customers: ReadonlySet<string>;
  before: readonly MrrInput[];
  after: readonly MrrInput[];
}

const changes = new WeakMap<readonly MrrInput[], HistoryChange>();

/**
 * Records that frozen `records` is `change.previous` with `change` applied. One generation is kept: the
 * earlier history's own link is dropped, so that a chain of refreshes does not keep every history alive.
 */
export function recordHistoryChange(records: readonly MrrInput[], change: HistoryChange): void {
  if (!Object.isFrozen(records) || !Object.isFrozen(change.previous)) return;
  changes.delete(change.previous);
  changes.set(records, change);
}

/**
 * A result of `compute(records)` kept for as long as `records` (a frozen array, which cannot change) is
 * alive; computed every time for any other array. The cached revenue history (history-cache.ts) is frozen,
 * so the panels of one dashboard page share one fold of it. With `derive`, a result not yet computed for
 * a history that was refreshed from an earlier one (recordHistoryChange) is derived from the earlier
 * history's result for the same key when there is one (`derive` may decline with undefined: computed then).
 */
export function memoOnFrozen<T>(
  memo: WeakMap<readonly MrrInput[], Map<string, T>>,
  records: readonly MrrInput[],
  key: string,
  compute: () => T,
  derive?: (previous: T, change: HistoryChange) => T | undefined,
): T {
  if (!Object.isFrozen(records)) return compute();
  let results = memo.get(records);
  if (!results) {
    results = new Map();
    memo.set(records, results);
  }
  let result = results.get(key);
  if (result === undefined) {
    const change = derive ? changes.get(records) : undefined;
    const previous = change ? memo.get(change.previous)?.get(key) : undefined;
    if (derive && change && previous !== undefined) result = derive(previous, change);
    if (result === undefined) result = compute();
    if (results.size >= 32) results.clear();
    results.set(key, result);
  }
  return result;
}

/**
 * A value kept in a WeakMap per object (a fold, a touches map), made the first time it is asked for: the
 * answers the revenue panels keep per fold (attribution, drill-down) are found through it.
 */
export function kept<K extends object, V>(map: WeakMap<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}
