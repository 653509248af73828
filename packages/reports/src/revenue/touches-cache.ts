// Every customer's first and last touch (readCustomerTouches) for the attribution panels, read once per
// project and then refreshed for the customers whose inputs changed. The uncached query joins every visit
// of the project (FINAL) with the linked visitors, which is most of an attribution panel's time, and on a
// live site visits, identifies and revenue land all the time; so, as history-cache.ts does for the revenue
// history, the touches are kept per warehouse and project, stamped with a cheap probe over the raw tables
// run before every read, and only what the probe says changed is read again. Nothing is served stale.
//
// The probe has two halves. Per bucket of visitor ids (cityHash64(visitor_id) % n): the count and a sum of
// hashes of the identities rows and of the visits rows of *linked* visitors (those in any identities or
// revenue row: a pageview of an anonymous visitor changes nothing). Per bucket of transaction ids: the
// same over the revenue rows' customer, visitor and times. Both tables are deduplicated by a key that
// holds the bucket's column (visits by visitor and start, identities by visitor and id, revenue by
// transaction), so what FINAL keeps of a bucket depends on that bucket's rows only: an unchanged probe
// means unchanged inputs. For each bucket the cache also keeps the customers of any raw row in it
// (identities and revenue rows of its visitors; revenue rows of its transactions), a superset of the
// customers whose touches the bucket's rows can change. A changed bucket re-reads the touches of its
// customers before and now, with the query itself (readCustomerTouches for those customers), so the
// figures are the query's own.
import type { Warehouse } from '@tally/warehouse';
import { probeRevenue, REVENUE_BUCKETS, sharedProbe } from './probe.ts';
import { type CustomerTouches, readCustomerTouches } from './touches.ts';

/** Buckets of visitor ids the inputs are probed in (transaction ids: probe.ts's REVENUE_BUCKETS). */
export const TOUCH_BUCKETS = 4096;

/** How many projects' touches one warehouse keeps (least recently used goes first). */
export const TOUCHES_CACHE_ENTRIES = 8;

/** Past this many customers to read again, the whole project is read (one query instead of a large IN). */
const MAX_CHANGED_CUSTOMERS = 5000;

interface Stamps {
  visitors: ReadonlyMap<number, string>;
  transactions: ReadonlyMap<number, string>;
}

interface State {
  touches: ReadonlyMap<string, CustomerTouches>;
  /** Per visitor bucket, the customers of its visitors' raw identities and revenue rows. */
  visitorCustomers: ReadonlyMap<number, readonly string[]>;
  /** Per transaction bucket, the customers of its raw revenue rows. */
  transactionCustomers: ReadonlyMap<number, readonly string[]>;
}

interface Entry {
  stamps: Stamps;
  state: Promise<State>;
}

const caches = new WeakMap<Warehouse, Map<string, Entry>>();

const IDENTITY_HASH = `cityHash64('i', visitor_id, customer_id, timestamp, received_at, id)`;
const VISIT_HASH = `cityHash64('v', visitor_id, start, version, is_deleted, channel, source, utm_source,
  utm_medium, utm_campaign, entry_path)`;

/** Every visitor id of a project's raw identities and revenue rows: the visitors that can be linked. */
const LINKABLE_VISITORS_SQL = `
  SELECT visitor_id FROM identities WHERE project_id = {project:String} AND visitor_id != ''
  UNION ALL
  SELECT visitor_id FROM revenue WHERE project_id = {project:String} AND visitor_id != ''`;

/**
 * The probe: over the raw tables (no FINAL, no join), so that it is cheap. Visits are hashed only for
 * linkable visitors; a visitor that becomes linked changes its bucket's identities or revenue hash too.
 * The revenue half is probe.ts's (one scan for this cache and the history's); both halves are
 * shared by the requests that come while they wait to start.
 */
async function probe(warehouse: Warehouse, project: string): Promise<Stamps> {
  const visitors = sharedProbe(warehouse, `touch-visitors\u0000${project}`, async (onStart) => {
    const rows = await warehouse.query<{ b: number | string; n: number | string; h: string }>(
      `SELECT cityHash64(visitor_id) % {buckets:UInt32} AS b, count() AS n, toString(sum(h)) AS h
       FROM
       (
         SELECT visitor_id, ${IDENTITY_HASH} AS h FROM identities
         WHERE project_id = {project:String} AND visitor_id != ''
         UNION ALL
         SELECT visitor_id, ${VISIT_HASH} AS h FROM visits
         WHERE project_id = {project:String} AND visitor_id IN (${LINKABLE_VISITORS_SQL})
       )
       GROUP BY b`,
      { project, buckets: TOUCH_BUCKETS },
      { onStart },
    );
    return new Map(rows.map((r) => [Number(r.b), `${r.n}:${r.h}`]));
  });
  const [byVisitor, revenue] = await Promise.all([visitors, probeRevenue(warehouse, project)]);
  return { visitors: byVisitor, transactions: revenue.touches };
}

function changedBuckets(before: ReadonlyMap<number, string>, now: ReadonlyMap<number, string>): number[] {
  const changed: number[] = [];
  for (const [bucket, stamp] of now) if (before.get(bucket) !== stamp) changed.push(bucket);
  for (const bucket of before.keys()) if (!now.has(bucket)) changed.push(bucket);
  return changed;
}

/** The customers of each bucket's raw rows (every bucket, or `only` those). */
async function bucketCustomers(
  warehouse: Warehouse,
  project: string,
  only?: { visitors: readonly number[]; transactions: readonly number[] },
): Promise<{ visitors: Map<number, string[]>; transactions: Map<number, string[]> }> {
  const read = async (sql: string, count: number, buckets: readonly number[] | undefined) => {
    if (buckets?.length === 0) return new Map<number, string[]>();
    const rows = await warehouse.query<{ b: number | string; customers: string[] }>(
      `SELECT b, groupUniqArray(customer_id) AS customers FROM (${sql})
       ${buckets ? 'WHERE b IN {only:Array(UInt32)}' : ''}
       GROUP BY b`,
      buckets ? { project, buckets: count, only: [...buckets] } : { project, buckets: count },
    );
    return new Map(rows.map((r) => [Number(r.b), r.customers]));
  };
  const visitors = await read(
    `SELECT cityHash64(visitor_id) % {buckets:UInt32} AS b, customer_id FROM identities
     WHERE project_id = {project:String} AND visitor_id != ''
     UNION ALL
     SELECT cityHash64(visitor_id) % {buckets:UInt32} AS b, customer_id FROM revenue
     WHERE project_id = {project:String} AND visitor_id != ''`,
    TOUCH_BUCKETS,
    only?.visitors,
  );
  const transactions = await read(
    `SELECT cityHash64(transaction_id) % {buckets:UInt32} AS b, customer_id FROM revenue
     WHERE project_id = {project:String}`,
    REVENUE_BUCKETS,
    only?.transactions,
  );
  return { visitors, transactions };
}

async function readWhole(warehouse: Warehouse, project: string): Promise<State> {
  // The touches before the buckets' customers: a row landing in between is then in the customers (and
  // read again with the next probe, which it changes), never in the touches without its customers.
  const touches = await readCustomerTouches(warehouse, project);
  const customers = await bucketCustomers(warehouse, project);
  return { touches, visitorCustomers: customers.visitors, transactionCustomers: customers.transactions };
}

/** `previous` with the touches of the changed buckets' customers (before and now) read again. */
async function refresh(
  warehouse: Warehouse,
  project: string,
  previous: State,
  changed: { visitors: readonly number[]; transactions: readonly number[] },
): Promise<State> {
  const now = await bucketCustomers(warehouse, project, changed);
  const customers = new Set<string>();
  const collect = (
    buckets: readonly number[],
    before: ReadonlyMap<number, readonly string[]>,
    after: ReadonlyMap<number, readonly string[]>,
  ) => {
    for (const bucket of buckets) {
      for (const c of before.get(bucket) ?? []) customers.add(c);
      for (const c of after.get(bucket) ?? []) customers.add(c);
    }
  };
  collect(changed.visitors, previous.visitorCustomers, now.visitors);
  collect(changed.transactions, previous.transactionCustomers, now.transactions);
  if (customers.size > MAX_CHANGED_CUSTOMERS) return readWhole(warehouse, project);
  const replace = <T>(map: ReadonlyMap<number, T>, buckets: readonly number[], read: Map<number, T>) => {
    const out = new Map(map);
    for (const bucket of buckets) {
      const value = read.get(bucket);
      if (value === undefined) out.delete(bucket);
      else out.set(bucket, value);
    }
    return out;
  };
  const visitorCustomers = replace(previous.visitorCustomers, changed.visitors, now.visitors);
  const transactionCustomers = replace(previous.transactionCustomers, changed.transactions, now.transactions);
  if (customers.size === 0) return { touches: previous.touches, visitorCustomers, transactionCustomers };
  const read = await readCustomerTouches(warehouse, project, [...customers]);
  const touches = new Map(previous.touches);
  for (const customer of customers) {
    const found = read.get(customer);
    if (found) touches.set(customer, found);
    else touches.delete(customer);
  }
  return { touches, visitorCustomers, transactionCustomers };
}

/**
 * readCustomerTouches of a whole project, from the cache when the probe says its inputs are unchanged;
 * when they changed, only the touches of the changed buckets' customers are read again. The map handed
 * out must not be changed: later requests share it.
 */
export async function readCustomerTouchesCached(
  warehouse: Warehouse,
  project: string,
): Promise<ReadonlyMap<string, CustomerTouches>> {
  let cache = caches.get(warehouse);
  if (!cache) {
    cache = new Map();
    caches.set(warehouse, cache);
  }
  // The probe first: data that lands while the touches are read is then read again next time, never
  // missing from an entry whose stamp claims it.
  const stamps = await probe(warehouse, project);
  let entry = cache.get(project);
  const changed = entry
    ? {
        visitors: changedBuckets(entry.stamps.visitors, stamps.visitors),
        transactions: changedBuckets(entry.stamps.transactions, stamps.transactions),
      }
    : null;
  if (!entry || !changed || changed.visitors.length + changed.transactions.length > 0) {
    const earlier = entry?.state;
    const state =
      earlier && changed
        ? earlier.then(
            (previous) => refresh(warehouse, project, previous, changed),
            () => readWhole(warehouse, project),
          )
        : readWhole(warehouse, project);
    const created: Entry = { stamps, state };
    entry = created;
    // A failed read is not kept: the next request reads again.
    state.catch(() => {
      if (cache.get(project) === created) cache.delete(project);
    });
  }
  cache.delete(project); // re-inserted last: the Map's order is the order of use
  cache.set(project, entry);
  while (cache.size > TOUCHES_CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
  return (await entry.state).touches;
}

/** Drops the warehouse's cached touches: the next read reads again (benchmarks measure a cold read). */
export function forgetCustomerTouches(warehouse: Warehouse): void {
  caches.delete(warehouse);
}
