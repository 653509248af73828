// Requests the gateway refused, counted per project, hour and status, kept for the dashboard's health view
// (docs/ingestion-health.md). The gateway writes them (services/gateway/src/refusals.ts), the
// dashboard reads them: the state store is the one both reach in every deployment, as the token store is
// (LMDB in TALLY_DATA_DIR, or Redis when REDIS_URL is set). Each flush of a gateway event loop is one
// document per project, keyed by its flush id: writing a flush again (a retry after an answer that was
// lost) replaces it, so sums over the documents stay exact; they expire after RETENTION_MS.
import type { StateStore } from './state-store.ts';

/** How long counts are kept: the health view shows the last 24 hours, and a day more covers any zone. */
export const REFUSAL_RETENTION_MS = 48 * 3_600_000;

const collection = (project: string) => `gateway-refusals:${project}`;

export interface RefusalCount {
  /** Start of the hour (ms since the epoch, UTC). */
  hour: number;
  /** The HTTP status answered. */
  status: number;
  count: number;
}

export class RefusalCounts {
  readonly #store: StateStore;

  constructor(store: StateStore) {
    this.#store = store;
  }

  /** Stores one flush of one project's counts; the same flush id written twice is counted once. */
  async add(project: string, flushId: string, counts: readonly RefusalCount[]): Promise<void> {
    await this.#store.put(collection(project), flushId, counts, REFUSAL_RETENTION_MS);
  }

  /** The project's counts per hour and status from `since` (ms) on, summed over every flush, by hour. */
  async read(project: string, since: number): Promise<RefusalCount[]> {
    const sums = new Map<string, RefusalCount>();
    for (const flush of await this.#store.list<RefusalCount[]>(collection(project))) {
      for (const { hour, status, count } of flush) {
        if (hour + 3_600_000 <= since) continue;
        const key = `${hour}:${status}`;
        const sum = sums.get(key) ?? { hour, status, count: 0 };
        sum.count += count;
        sums.set(key, sum);
      }
    }
    return [...sums.values()].sort((a, b) => a.hour - b.hour || a.status - b.status);
  }
}
