// The probes of the revenue caches (history-cache.ts, touches-cache.ts): what the stored rows of a project
// are now, per bucket of ids, as short texts that change whenever a row is inserted, replaced or deleted.
// Both caches probe the raw revenue table per bucket of transaction ids, each hashing the columns it
// reads, so one scan gives both stamps. And every revenue panel probes before it reads: a page asks for
// six panels at once, and on chDB they queue one statement at a time. So a probe is shared by the
// requests that come while it waits to start (Warehouse.query's onStart): whatever landed before such a
// request is in that probe's answer, since the probe starts after it. A probe that started is never
// joined: a later request runs its own.
import type { Warehouse } from '@tally/warehouse';

/** Buckets of transaction ids (cityHash64(transaction_id) % n) both caches probe and re-read by. */
export const REVENUE_BUCKETS = 4096;

/** What the revenue history's fold reads of a row (history-cache.ts). */
const HISTORY_HASH = `cityHash64(transaction_id, id, customer_id, customer_subscription_id, event_type, currency,
  amount, mrr_impact, is_recurring, metadata['interval'], timestamp, received_at)`;
/** What a customer's touches depend on in a revenue row (touches-cache.ts). */
const TOUCHES_HASH = 'cityHash64(transaction_id, customer_id, visitor_id, timestamp, received_at)';

export interface RevenueProbe {
  /** Per bucket (a bucket without rows is absent): the history's stamp. */
  history: ReadonlyMap<number, string>;
  /** Per bucket: the touches' stamp. */
  touches: ReadonlyMap<number, string>;
}

interface Pending {
  started: boolean;
  result: Promise<unknown>;
}

const pending = new WeakMap<Warehouse, Map<string, Pending>>();

/**
 * `run(onStart)`, or the answer of the same `key`'s run that has not started yet (onStart not called):
 * requests that come while one waits in the engine's queue share it.
 */
export function sharedProbe<T>(
  warehouse: Warehouse,
  key: string,
  run: (onStart: () => void) => Promise<T>,
): Promise<T> {
  let runs = pending.get(warehouse);
  if (!runs) {
    runs = new Map();
    pending.set(warehouse, runs);
  }
  const waiting = runs.get(key);
  if (waiting && !waiting.started) return waiting.result as Promise<T>;
  const entry: Pending = { started: false, result: Promise.resolve() };
  const result = run(() => {
    entry.started = true;
  });
  entry.result = result;
  runs.set(key, entry);
  const done = () => {
    if (runs.get(key) === entry) runs.delete(key);
  };
  result.then(done, done);
  return result;
}

/** Both caches' stamps of a project's stored revenue (every currency), per bucket of transaction ids. */
export function probeRevenue(warehouse: Warehouse, project: string): Promise<RevenueProbe> {
  return sharedProbe(warehouse, `revenue\u0000${project}`, async (onStart) => {
    const rows = await warehouse.query<{ b: number | string; n: number | string; h: string; t: string }>(
      `SELECT cityHash64(transaction_id) % {buckets:UInt32} AS b, count() AS n,
              toString(sum(${HISTORY_HASH})) AS h, toString(sum(${TOUCHES_HASH})) AS t
       FROM revenue
       WHERE project_id = {project:String}
       GROUP BY b`,
      { project, buckets: REVENUE_BUCKETS },
      { onStart },
    );
    return {
      history: new Map(rows.map((r) => [Number(r.b), `${r.n}:${r.h}`])),
      touches: new Map(rows.map((r) => [Number(r.b), `${r.n}:${r.t}`])),
    };
  });
}
