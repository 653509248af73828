// The revenue consumer as a library: consumes revenue in batches and lands each transaction once. A
// record whose (project, transaction_id) is already stored, or appears earlier in the same batch,
// changes nothing: retries by the client and redelivery by the log never double-count. The table's
// ReplacingMergeTree on (project_id, transaction_id) backs this up should two writers ever race.
// After each batch, the MRR movements of every customer in it are recomputed from that customer's whole
// history into mrr_movements (also for records that were duplicates: a crash between the two writes is
// repaired by the redelivery). `tally report mrr` recomputes from the records itself.
import type { IngestRecordOf } from '@tally/contract';
import type { LogMessage, RecordLog } from '@tally/log';
import {
  type BatchOptions,
  backfillMrrMovements,
  consumeInBatches,
  type RunningBatchLoop,
  refreshMrrMovements,
  type Warehouse,
} from '@tally/warehouse';
import { revenueRow } from './rows.ts';

export const REVENUE_GROUP = 'revenue';

export interface ConsumerLogger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export interface RevenueConsumerOptions {
  log: RecordLog;
  warehouse: Warehouse;
  batch: BatchOptions;
  logger?: ConsumerLogger;
  group?: string;
}

/** Transaction ids of `project` among `ids` that the warehouse already holds. */
async function storedTransactions(
  warehouse: Warehouse,
  project: string,
  ids: string[],
): Promise<Set<string>> {
  const rows = await warehouse.query<{ transaction_id: string }>(
    `SELECT DISTINCT transaction_id FROM revenue
     WHERE project_id = {project:String} AND transaction_id IN {ids:Array(String)}`,
    { project, ids },
  );
  return new Set(rows.map((row) => row.transaction_id));
}

/** Writes one batch of revenue records: the first record of each new transaction. */
export async function landRevenue(
  warehouse: Warehouse,
  messages: readonly LogMessage[],
  logger?: ConsumerLogger,
): Promise<{ stored: number; duplicates: number }> {
  const firstByProject = new Map<string, Map<string, IngestRecordOf<'revenue'>>>();
  for (const { record } of messages) {
    if (record.type !== 'revenue') continue;
    const transactions = firstByProject.get(record.project_id) ?? new Map();
    firstByProject.set(record.project_id, transactions);
    if (!transactions.has(record.data.transaction_id)) transactions.set(record.data.transaction_id, record);
  }
  const rows = [];
  for (const [project, transactions] of firstByProject) {
    const stored = await storedTransactions(warehouse, project, [...transactions.keys()]);
    for (const [transactionId, record] of transactions) {
      if (stored.has(transactionId)) continue;
      const { row, warning } = revenueRow(record);
      if (warning) logger?.warn({ project, transaction_id: transactionId }, warning);
      rows.push(row);
    }
  }
  await warehouse.insert('revenue', rows);
  for (const [project, transactions] of firstByProject) {
    const customers = new Set([...transactions.values()].map((record) => record.data.customer_id));
    await refreshMrrMovements(warehouse, project, [...customers]);
  }
  return { stored: rows.length, duplicates: messages.length - rows.length };
}

export function startRevenueConsumer(options: RevenueConsumerOptions): RunningBatchLoop {
  const consumer = options.log.consumer({ group: options.group ?? REVENUE_GROUP, topics: ['revenue'] });
  // A warehouse migrated from before mrr_movements existed gets the table filled at start; if that
  // fails, the first batch tries again (and waits for it).
  let backfill: Promise<void> | null = null;
  const backfilled = () => {
    backfill ??= backfillMrrMovements(options.warehouse).then(
      (customers) => {
        if (customers > 0) options.logger?.info({ customers }, 'MRR movements backfilled');
      },
      (error: unknown) => {
        backfill = null;
        throw error;
      },
    );
    return backfill;
  };
  backfilled().catch((error: unknown) =>
    options.logger?.warn({ err: error }, 'MRR movements backfill failed; retrying with the first batch'),
  );
  const loop = consumeInBatches({
    ...options.batch,
    consumer,
    land: async (messages) => {
      await backfilled();
      const { stored, duplicates } = await landRevenue(options.warehouse, messages, options.logger);
      options.logger?.info({ records: messages.length, stored, duplicates }, 'revenue batch landed');
    },
    onRetry: (error, attempt) =>
      options.logger?.warn({ err: error, attempt }, 'revenue batch failed; retrying'),
  });
  return {
    done: loop.done.finally(() => consumer.close()),
    stop: async () => {
      await loop.stop();
      await backfill?.catch(() => {});
    },
  };
}
