// withRetry: wraps any warehouse so that operations failing with a retryable error (network, overload)
// are retried with exponential backoff. Inserts are safe to retry: every table is keyed so that a row
// written twice is one row (ReplacingMergeTree on the record id or the transaction id).
import { backoffDelay } from '@tally/backoff';
import { WarehouseError } from './errors.ts';
import type { QueryParams, Warehouse } from './warehouse.ts';

export interface RetryOptions {
  /** Attempts in all, the first included. */
  attempts?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  onRetry?: (error: WarehouseError, attempt: number) => void;
}

export function withRetry(warehouse: Warehouse, options: RetryOptions = {}): Warehouse {
  const attempts = options.attempts ?? 5;
  const base = options.baseDelayMs ?? 100;
  const max = options.maxDelayMs ?? 5000;
  async function retrying<T>(operation: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await operation();
      } catch (error) {
        if (!(error instanceof WarehouseError) || !error.retryable || attempt >= attempts) throw error;
        options.onRetry?.(error, attempt);
        await new Promise((r) => setTimeout(r, backoffDelay(attempt, base, Math.random(), max)));
      }
    }
  }
  return {
    kind: warehouse.kind,
    database: warehouse.database,
    cluster: warehouse.cluster,
    listParameterBytes: warehouse.listParameterBytes,
    query: <T>(sql: string, params?: QueryParams) => retrying(() => warehouse.query<T>(sql, params)),
    queryText: (sql) => retrying(() => warehouse.queryText(sql)),
    command: (sql, params) => retrying(() => warehouse.command(sql, params)),
    insert: (table, rows) => retrying(() => warehouse.insert(table, rows)),
    ping: () => warehouse.ping(),
    close: () => warehouse.close(),
  };
}
