// The revenue history a dashboard's revenue panels fold, read once and then refreshed by what changed.
// Every panel but the customer page folds the project's whole history of a currency (readMrrInputs), and a
// page asks several panels for the same range: reading, parsing and folding that history is most of each
// panel's time, and on a live site revenue lands all the time. So the parsed history is kept per
// warehouse, project and currency, stamped with a cheap probe of the stored rows (their count and a sum of
// hashes of every column the fold reads, over the raw revenue table, not FINAL), as a whole and per bucket
// of transaction ids. The probe runs before every read, so a stamp can only be older than the data it
// labels. When it changed, only the buckets whose probe changed are read again (every copy of a
// transaction is in one bucket, so what FINAL keeps of a bucket depends on its rows only) and merged into
// the kept history; the new history records which customers changed (mrr-movements.ts,
// recordHistoryChange), and the folds of revenue-period.ts, monthly-revenue.ts and revenue-customers.ts
// derive theirs from the earlier history's by folding those customers again. Nothing is served stale, and
// the figures are the fold's own. The arrays handed out are frozen: the folds memoize on them.
import type { QueryParams, Warehouse } from '../warehouse.ts';
import { readStoredHistory } from './monthly-revenue.ts';
import { byRecordTime, type HistoryChange, type MrrInput, recordHistoryChange } from './mrr-movements.ts';

/** How many project+currency histories one warehouse keeps (least recently used goes first). */
export const REVENUE_CACHE_ENTRIES = 8;

/**
 * The stored revenue is probed in this many buckets of transaction ids (cityHash64(transaction_id) % n):
 * new revenue changes a few buckets, and only those are read again. Every copy of a transaction is in
 * one bucket, so what ReplacingMergeTree keeps of a bucket depends on that bucket's rows only.
 */
export const REVENUE_BUCKETS = 1024;

/** Past this many changed buckets the whole history is read again (one query instead of a large IN). */
const MAX_CHANGED_BUCKETS = REVENUE_BUCKETS / 4;

/** A history as read: its records (frozen, the fold's order), each bucket's records, and its `until`s. */
interface History {
  records: readonly MrrInput[];
  buckets: ReadonlyMap<number, readonly MrrInput[]>;
  /** The history up to a time (ms), one frozen array per `until` asked for. */
  untils: Map<number, readonly MrrInput[]>;
  /** How it was made from the history before it (null for a whole read); dropped with the next refresh. */
  change: { previous: History; change: HistoryChange } | null;
}

interface Entry {
  /** revenueStamp of the whole project when the history was read: equal, nothing changed. */
  stamp: string;
  /** Each bucket's probe when the history was read (a bucket without rows is absent). */
  stamps: ReadonlyMap<number, string>;
  history: Promise<History>;
}

const caches = new WeakMap<Warehouse, Map<string, Entry>>();

const HASHED_COLUMNS = `transaction_id, id, customer_id, customer_subscription_id, event_type, currency, amount,
  mrr_impact, is_recurring, metadata['interval'], timestamp, received_at`;

/**
 * What the stored revenue of a project (and currency) is now, as a short text that changes whenever a row
 * is inserted, replaced or deleted. Over the raw table, so it is cheap: no FINAL, no sort.
 */
export async function revenueStamp(
  warehouse: Warehouse,
  project: string,
  currency?: string | undefined,
): Promise<string> {
  const params: QueryParams = { project };
  if (currency) params.currency = currency;
  const [row] = await warehouse.query<{ n: number | string; h: string }>(
    `SELECT count() AS n, toString(sum(cityHash64(${HASHED_COLUMNS}))) AS h
     FROM revenue
     WHERE project_id = {project:String} ${currency ? 'AND currency = {currency:String}' : ''}`,
    params,
  );
  return `${row?.n ?? 0}:${row?.h ?? ''}`;
}

/**
 * revenueStamp per bucket of transaction ids, over every currency of the project: a row of another
 * currency with the same transaction id decides which copy is kept as much as one of this currency.
 */
async function bucketStamps(warehouse: Warehouse, project: string): Promise<Map<number, string>> {
  const rows = await warehouse.query<{ b: number | string; n: number | string; h: string }>(
    `SELECT cityHash64(transaction_id) % {buckets:UInt32} AS b, count() AS n,
            toString(sum(cityHash64(${HASHED_COLUMNS}))) AS h
     FROM revenue
     WHERE project_id = {project:String}
     GROUP BY b`,
    { project, buckets: REVENUE_BUCKETS },
  );
  return new Map(rows.map((r) => [Number(r.b), `${r.n}:${r.h}`]));
}

/** The buckets whose probe differs between two probes. */
function changedBuckets(before: ReadonlyMap<number, string>, now: ReadonlyMap<number, string>): number[] {
  const changed: number[] = [];
  for (const [bucket, stamp] of now) if (before.get(bucket) !== stamp) changed.push(bucket);
  for (const bucket of before.keys()) if (!now.has(bucket)) changed.push(bucket);
  return changed;
}

async function readWhole(
  warehouse: Warehouse,
  options: { project: string; currency?: string | undefined },
): Promise<History> {
  const { records, buckets } = await readStoredHistory(warehouse, {
    project: options.project,
    currency: options.currency,
    buckets: REVENUE_BUCKETS,
  });
  const byBucket = new Map<number, MrrInput[]>();
  for (let i = 0; i < records.length; i++) {
    const bucket = buckets[i] as number;
    let list = byBucket.get(bucket);
    if (!list) {
      list = [];
      byBucket.set(bucket, list);
    }
    list.push(records[i] as MrrInput);
  }
  return { records: Object.freeze(records), buckets: byBucket, untils: new Map(), change: null };
}

/**
 * `previous` with the records of `changed` buckets read again: the rest of the history is kept as it is
 * (those buckets' stored rows are unchanged), the re-read records merged in the fold's order, and the
 * change recorded so that the folds of the new history are derived from the earlier ones.
 */
async function refresh(
  warehouse: Warehouse,
  options: { project: string; currency?: string | undefined },
  previous: History,
  changed: readonly number[],
): Promise<History> {
  const read = await readStoredHistory(warehouse, {
    project: options.project,
    currency: options.currency,
    buckets: REVENUE_BUCKETS,
    only: changed,
  });
  const removed = new Set<MrrInput>();
  const customers = new Set<string>();
  for (const bucket of changed) {
    for (const r of previous.buckets.get(bucket) ?? []) {
      removed.add(r);
      customers.add(r.customer_id);
    }
  }
  for (const r of read.records) customers.add(r.customer_id);
  const buckets = new Map(previous.buckets);
  for (const bucket of changed) buckets.delete(bucket);
  for (let i = 0; i < read.records.length; i++) {
    const bucket = read.buckets[i] as number;
    const list = buckets.get(bucket);
    if (list) (list as MrrInput[]).push(read.records[i] as MrrInput);
    else buckets.set(bucket, [read.records[i] as MrrInput]);
  }
  if (removed.size === 0 && read.records.length === 0) {
    return { ...previous, buckets, untils: previous.untils };
  }
  // Both lists are in the fold's order (byRecordTime is a total order: transaction ids are unique).
  const records: MrrInput[] = [];
  const added = read.records;
  let next = 0;
  for (const r of previous.records) {
    if (removed.has(r)) continue;
    for (; next < added.length && byRecordTime(added[next] as MrrInput, r) < 0; next++) {
      records.push(added[next] as MrrInput);
    }
    records.push(r);
  }
  for (; next < added.length; next++) records.push(added[next] as MrrInput);
  Object.freeze(records);
  const change: HistoryChange = {
    previous: previous.records,
    customers,
    before: previous.records.filter((r) => customers.has(r.customer_id)),
    after: records.filter((r) => customers.has(r.customer_id)),
  };
  recordHistoryChange(records, change);
  // One generation of links: the earlier history no longer needs its own.
  previous.change = null;
  return { records, buckets, untils: new Map(), change: { previous, change } };
}

/** The history up to `until`, frozen, linked to the earlier history's when this one was refreshed. */
function upTo(history: History, until: number): readonly MrrInput[] {
  let found = history.untils.get(until);
  if (!found) {
    found = Object.freeze(history.records.filter((r) => r.timestamp < until));
    const earlier = history.change?.previous.untils.get(until);
    if (earlier && history.change) {
      const { customers, before, after } = history.change.change;
      recordHistoryChange(found, {
        previous: earlier,
        customers,
        before: before.filter((r) => r.timestamp < until),
        after: after.filter((r) => r.timestamp < until),
      });
    }
    if (history.untils.size >= 24) history.untils.clear();
    history.untils.set(until, found);
  }
  return found;
}

/**
 * readMrrInputs of a project (a currency or all) up to `until`, from the cache when the stored revenue has
 * not changed since it was read; when it has, only the buckets of transactions whose stored rows changed
 * are read again. The array is frozen; the records must not be changed either.
 */
export async function readMrrInputsCached(
  warehouse: Warehouse,
  options: { project: string; currency?: string | undefined; until?: number | undefined },
): Promise<readonly MrrInput[]> {
  let cache = caches.get(warehouse);
  if (!cache) {
    cache = new Map();
    caches.set(warehouse, cache);
  }
  const key = `${options.project}\u0000${options.currency ?? ''}`;
  // The probes first: data that lands while the history is read is then in the history, never missing
  // from an entry whose stamp claims it. The whole project's stamp first (one sum); the buckets' only
  // when it changed, to find which buckets to read again.
  const stamp = await revenueStamp(warehouse, options.project);
  let entry = cache.get(key);
  if (!entry || entry.stamp !== stamp) {
    const stamps = await bucketStamps(warehouse, options.project);
    const changed = entry ? changedBuckets(entry.stamps, stamps) : null;
    const earlier = entry?.history;
    const history =
      earlier && changed?.length === 0
        ? earlier
        : earlier && changed && changed.length <= MAX_CHANGED_BUCKETS
          ? earlier.then(
              (previous) => refresh(warehouse, options, previous, changed),
              () => readWhole(warehouse, options),
            )
          : readWhole(warehouse, options);
    const created: Entry = { stamp, stamps, history };
    entry = created;
    // A failed read is not kept: the next request reads again.
    history.catch(() => {
      if (cache.get(key) === created) cache.delete(key);
    });
  }
  cache.delete(key); // re-inserted last: the Map's order is the order of use
  cache.set(key, entry);
  while (cache.size > REVENUE_CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
  const history = await entry.history;
  if (options.until === undefined) return history.records;
  return upTo(history, options.until);
}

/** Drops the warehouse's cached histories: the next read reads again (benchmarks measure a cold read). */
export function forgetRevenueHistory(warehouse: Warehouse): void {
  caches.delete(warehouse);
}
