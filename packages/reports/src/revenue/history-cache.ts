// The revenue history a dashboard's revenue panels fold, read once and then refreshed by what changed.
// Every panel but the customer page folds the project's whole history of a currency (readMrrInputs), and a
// page asks several panels for the same range: reading, parsing and folding that history is most of each
// panel's time, and on a live site revenue lands all the time. So the parsed history is kept per
// warehouse, project and currency, stamped with a cheap probe of the stored rows (their count and a sum of
// hashes of every column the fold reads, over the raw revenue table, not FINAL) per bucket of transaction
// ids. The probe runs before every read, so a stamp can only be older than the data it labels. When new
// revenue landed, only the buckets whose probe changed are read again (every copy of a
// transaction is in one bucket, so what FINAL keeps of a bucket depends on its rows only) and merged into
// the kept history; the new history records which customers changed (history.ts,
// recordHistoryChange), and the folds of period.ts, monthly.ts and customers.ts
// derive theirs from the earlier history's by folding those customers again. Nothing is served stale, and
// the figures are the fold's own. The arrays handed out are frozen: the folds memoize on them.
import type { Warehouse } from '@tally/warehouse';
import { type HistoryChange, readStoredHistory, recordHistoryChange } from './history.ts';
import { byRecordTime, type MrrInput } from './ledger.ts';
import { probeRevenue, REVENUE_BUCKETS } from './probe.ts';

/** How many project+currency histories one warehouse keeps (least recently used goes first). */
export const REVENUE_CACHE_ENTRIES = 8;

/** Past this many changed buckets the whole history is read again (one query instead of a large IN). */
const MAX_CHANGED_BUCKETS = REVENUE_BUCKETS / 4;

/** A history as read: its records (frozen, the fold's order), each bucket's and each customer's records. */
interface History {
  records: readonly MrrInput[];
  buckets: ReadonlyMap<number, readonly MrrInput[]>;
  customers: ReadonlyMap<string, readonly MrrInput[]>;
  /** The history up to a time (ms), one frozen array per `until` asked for. */
  untils: Map<number, readonly MrrInput[]>;
  /** How it was made from the history before it (null for a whole read); dropped with the next refresh. */
  change: { previous: History; change: HistoryChange } | null;
}

interface Entry {
  /** Each bucket's probe when the history was read (a bucket without rows is absent). */
  stamps: ReadonlyMap<number, string>;
  history: Promise<History>;
}

const caches = new WeakMap<Warehouse, Map<string, Entry>>();

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
  const byCustomer = new Map<string, MrrInput[]>();
  for (let i = 0; i < records.length; i++) {
    const record = records[i] as MrrInput;
    const bucket = buckets[i] as number;
    const inBucket = byBucket.get(bucket);
    if (inBucket) inBucket.push(record);
    else byBucket.set(bucket, [record]);
    const ofCustomer = byCustomer.get(record.customer_id);
    if (ofCustomer) ofCustomer.push(record);
    else byCustomer.set(record.customer_id, [record]);
  }
  return {
    records: Object.freeze(records),
    buckets: byBucket,
    customers: byCustomer,
    untils: new Map(),
    change: null,
  };
}

/** Where `record` is in `records` (in the fold's order), or where it would go: binary search. */
function positionOf(records: readonly MrrInput[], record: MrrInput): number {
  let low = 0;
  let high = records.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (byRecordTime(records[middle] as MrrInput, record) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

const PARTS_PER_CONCAT = 4096;

/** `records` without `removed` (each one of them) and with `added` merged in, in the fold's order. */
function replaced(
  records: readonly MrrInput[],
  removed: readonly MrrInput[],
  added: readonly MrrInput[],
): MrrInput[] {
  // The positions by binary search, so that the pass over the whole history compares nothing; should the
  // engine's order of a tie differ from byRecordTime's (strings compared as bytes there, as UTF-16 units
  // here), a removed record is found by identity.
  const skip = removed
    .map((r) => {
      const at = positionOf(records, r);
      return records[at] === r ? at : records.indexOf(r);
    })
    .sort((x, y) => x - y);
  const inserted = [...added].sort(byRecordTime);
  // Cut points: before each added record (it goes before records[at]) and around each removed one; the
  // runs of kept records between them are copied whole (slice and concat copy in bulk).
  const cuts: Array<{ at: number; add: MrrInput | null }> = [
    ...inserted.map((r) => ({ at: positionOf(records, r), add: r })),
    ...skip.map((at) => ({ at, add: null })),
  ].sort((x, y) => x.at - y.at || (x.add ? -1 : 0) - (y.add ? -1 : 0));
  const parts: Array<readonly MrrInput[] | MrrInput> = [];
  let from = 0;
  for (const cut of cuts) {
    if (cut.at > from) parts.push(records.slice(from, cut.at));
    if (cut.add) {
      parts.push(cut.add);
      from = Math.max(from, cut.at);
    } else from = cut.at + 1;
  }
  if (from < records.length) parts.push(records.slice(from));
  // concat takes its parts as arguments: a few thousand at a time (a refresh of many buckets has many).
  let out: MrrInput[] = [];
  for (let i = 0; i < parts.length; i += PARTS_PER_CONCAT)
    out = out.concat(...(parts.slice(i, i + PARTS_PER_CONCAT) as MrrInput[][]));
  return out;
}

/**
 * `previous` with the records of `changed` buckets read again: the rest of the history is kept as it is
 * (those buckets' stored rows are unchanged), the re-read records merged in the fold's order, and the
 * change recorded so that the folds of the new history are derived from the earlier ones. Its cost is
 * that of the changed buckets and customers, plus one pass over the history to build the new array.
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
  const removed: MrrInput[] = [];
  for (const bucket of changed) removed.push(...(previous.buckets.get(bucket) ?? []));
  const buckets = new Map(previous.buckets);
  for (const bucket of changed) buckets.delete(bucket);
  for (let i = 0; i < read.records.length; i++) {
    const bucket = read.buckets[i] as number;
    const list = buckets.get(bucket);
    if (list) (list as MrrInput[]).push(read.records[i] as MrrInput);
    else buckets.set(bucket, [read.records[i] as MrrInput]);
  }
  if (removed.length === 0 && read.records.length === 0) return { ...previous, buckets };
  const gone = new Set(removed);
  const customers = new Set<string>();
  for (const r of removed) customers.add(r.customer_id);
  for (const r of read.records) customers.add(r.customer_id);
  // Each changed customer's records before and now (in the fold's order; byRecordTime is a total order:
  // transaction ids are unique).
  const index = new Map(previous.customers);
  const before: MrrInput[] = [];
  const after: MrrInput[] = [];
  const addedOf = new Map<string, MrrInput[]>();
  for (const r of read.records) {
    const list = addedOf.get(r.customer_id);
    if (list) list.push(r);
    else addedOf.set(r.customer_id, [r]);
  }
  for (const customer of customers) {
    const old = previous.customers.get(customer) ?? [];
    before.push(...old);
    const now = [...old.filter((r) => !gone.has(r)), ...(addedOf.get(customer) ?? [])].sort(byRecordTime);
    after.push(...now);
    if (now.length > 0) index.set(customer, now);
    else index.delete(customer);
  }
  before.sort(byRecordTime);
  after.sort(byRecordTime);
  const records = Object.freeze(replaced(previous.records, removed, read.records));
  const change: HistoryChange = { previous: previous.records, customers, before, after };
  recordHistoryChange(records, change);
  // One generation of links: the earlier history no longer needs its own.
  previous.change = null;
  return { records, buckets, customers: index, untils: new Map(), change: { previous, change } };
}

/** The history up to `until`, frozen, linked to the earlier history's when this one was refreshed. */
function upTo(history: History, until: number): readonly MrrInput[] {
  let found = history.untils.get(until);
  if (!found) {
    // The records are in time order: those before `until` are a prefix.
    let low = 0;
    let high = history.records.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((history.records[middle] as MrrInput).timestamp < until) low = middle + 1;
      else high = middle;
    }
    if (low === history.records.length) {
      // The whole history (the usual case: a range that ends this month): the same array, already frozen
      // and linked to the earlier history by refresh(), not a copy of it.
      found = history.records;
    } else {
      found = Object.freeze(history.records.slice(0, low));
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
  // The probe first: data that lands while the history is read is then in the history, never missing
  // from an entry whose stamp claims it. One probe per bucket (as cheap as one over the whole table: the
  // same scan and hashes; probe.ts), compared bucket by bucket: the changed ones are read again.
  const stamps = (await probeRevenue(warehouse, options.project)).history;
  let entry = cache.get(key);
  const changed = entry ? changedBuckets(entry.stamps, stamps) : null;
  if (!entry || (changed as number[]).length > 0) {
    const earlier = entry?.history;
    const history =
      earlier && changed && changed.length <= MAX_CHANGED_BUCKETS
        ? earlier.then(
            (previous) => refresh(warehouse, options, previous, changed),
            () => readWhole(warehouse, options),
          )
        : readWhole(warehouse, options);
    const created: Entry = { stamps, history };
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
