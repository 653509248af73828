// The revenue history a dashboard's revenue panels fold, read once and reused while it is unchanged.
// Every panel but the customer page folds the project's whole history of a currency (readMrrInputs), and a
// page asks several panels for the same range: reading and parsing that history is most of each panel's
// time. So the parsed history is kept per warehouse, project and currency, stamped with a cheap probe of
// the stored rows (their count and a sum of hashes of every column the fold reads, over the raw revenue
// table, not FINAL). The probe runs before every read, before the history is read, so a stamp can only be
// older than the data it labels: any insert, redelivered copy, merge or deletion since changes the probe
// and the next read reads the history again. Nothing is served stale, and the figures are the fold's own
// (the same records, the same code). The arrays handed out are frozen: the folds of revenue-period.ts and
// revenue-customers.ts memoize their results on a frozen array, which cannot change under them.
import type { QueryParams, Warehouse } from '../warehouse.ts';
import { readMrrInputs } from './monthly-revenue.ts';
import type { MrrInput } from './mrr-movements.ts';

/** How many project+currency histories one warehouse keeps (least recently used goes first). */
export const REVENUE_CACHE_ENTRIES = 8;

interface Entry {
  stamp: string;
  history: Promise<readonly MrrInput[]>;
  /** The history up to a time (ms), one frozen array per `until` asked for. */
  untils: Map<number, readonly MrrInput[]>;
}

const caches = new WeakMap<Warehouse, Map<string, Entry>>();

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
    `SELECT count() AS n,
            toString(sum(cityHash64(transaction_id, id, customer_id, customer_subscription_id, event_type,
              currency, amount, mrr_impact, is_recurring, metadata['interval'], timestamp, received_at))) AS h
     FROM revenue
     WHERE project_id = {project:String} ${currency ? 'AND currency = {currency:String}' : ''}`,
    params,
  );
  return `${row?.n ?? 0}:${row?.h ?? ''}`;
}

/**
 * readMrrInputs of a project (a currency or all) up to `until`, from the cache when the stored revenue has
 * not changed since it was read. The array is frozen; the records must not be changed either.
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
  // from an entry whose stamp claims it.
  const stamp = await revenueStamp(warehouse, options.project, options.currency);
  let entry = cache.get(key);
  if (!entry || entry.stamp !== stamp) {
    const history = readMrrInputs(warehouse, { project: options.project, currency: options.currency }).then(
      (records) => Object.freeze(records),
    );
    const created: Entry = { stamp, history, untils: new Map() };
    entry = created;
    // A failed read is not kept: the next request reads again.
    history.catch(() => {
      if (cache.get(key) === created) cache.delete(key);
    });
  }
  cache.delete(key); // re-inserted last: the Map's order is the order of use
  cache.set(key, entry);
  while (cache.size > REVENUE_CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
  const all = await entry.history;
  if (options.until === undefined) return all;
  const until = options.until;
  let upTo = entry.untils.get(until);
  if (!upTo) {
    upTo = Object.freeze(all.filter((r) => r.timestamp < until));
    if (entry.untils.size >= 24) entry.untils.clear();
    entry.untils.set(until, upTo);
  }
  return upTo;
}

/** Drops the warehouse's cached histories: the next read reads again (benchmarks measure a cold read). */
export function forgetRevenueHistory(warehouse: Warehouse): void {
  caches.delete(warehouse);
}
