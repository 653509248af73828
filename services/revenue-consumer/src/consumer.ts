// The revenue consumer as a library: consumes revenue in batches (the runtime's batch loop,
// @tally/consumer) and lands each transaction once. A record whose id the project has stored, or whose
// (project, transaction_id) is stored or appears earlier in the batch, changes nothing: retries by the
// client and redelivery by the log never double-count. The table's ReplacingMergeTree on
// (project_id, transaction_id) backs this up should two writers ever race.
// After each batch, the MRR movements of every customer in it are recomputed from that customer's whole
// history into mrr_movements (also for records that were duplicates: a crash between the writes is
// repaired by the redelivery), and written only while the consumer still holds their partitions (the
// holding's assert, before the write). `tally report mrr` recomputes from the records itself.

import {
  backfillAtStart,
  type ConsumerOptions,
  consumeInBatches,
  firstCopies,
  type Lander,
  landingAfter,
  RecordError,
  type RunningBatchLoop,
} from '@tally/consumer';
import { validateRecord } from '@tally/contract';
import { backfillMrrMovements, refreshCustomersMrr } from '@tally/reports/tables';
import { crossProjectLookups, recordIdRow, type Warehouse } from '@tally/warehouse';
import { type RevenueRow, revenueRow } from './rows.ts';

export const REVENUE_GROUP = 'revenue';

export type RevenueConsumerOptions = ConsumerOptions;

/** Transaction ids looked up per query at most; their size bounds the list first (parameter-lists.ts). */
const TRANSACTIONS_PER_QUERY = 10_000;

/** The key of a project's transaction in the set below. */
const transactionKey = (project: string, transaction: string) => `${project}\n${transaction}`;

/**
 * The transactions among `wanted` (each of a project) that the warehouse already holds, by
 * transactionKey: every project's looked up together (crossProjectLookups), a row of another project than
 * the one asking left out.
 */
async function storedTransactions(
  warehouse: Warehouse,
  wanted: readonly { project: string; transaction: string }[],
): Promise<Set<string>> {
  const asked = new Set(wanted.map(({ project, transaction }) => transactionKey(project, transaction)));
  const stored = new Set<string>();
  for (const { values, projects } of crossProjectLookups(
    wanted,
    (w) => w.transaction,
    TRANSACTIONS_PER_QUERY,
    warehouse.listParameterBytes,
  )) {
    const rows = await warehouse.query<{ project_id: string; transaction_id: string }>(
      `SELECT DISTINCT project_id, transaction_id FROM revenue
       WHERE project_id IN {projects:Array(String)} AND transaction_id IN {ids:Array(String)}`,
      { projects, ids: values },
    );
    for (const row of rows) {
      const key = transactionKey(row.project_id, row.transaction_id);
      if (asked.has(key)) stored.add(key);
    }
  }
  return stored;
}

export function revenueLander(warehouse: Warehouse): Lander<RevenueRow> {
  return {
    prepare({ record }) {
      const checked = validateRecord(record);
      if (!checked.ok) throw new RecordError('contract', checked.message);
      if (record.type !== 'revenue') {
        throw new RecordError('type', `the revenue consumer does not land ${record.type} records`);
      }
      return revenueRow(record);
    },
    async land(items, holding) {
      const fresh = await firstCopies(warehouse, items);
      // Of the new record ids, the first record of each transaction the project does not have yet.
      const byProject = new Map<string, Map<string, RevenueRow>>();
      for (const { row } of fresh) {
        const transactions = byProject.get(row.project_id) ?? new Map<string, RevenueRow>();
        byProject.set(row.project_id, transactions);
        if (!transactions.has(row.transaction_id)) transactions.set(row.transaction_id, row);
      }
      const stored = await storedTransactions(
        warehouse,
        [...byProject].flatMap(([project, transactions]) =>
          [...transactions.keys()].map((transaction) => ({ project, transaction })),
        ),
      );
      const rows: RevenueRow[] = [];
      for (const [project, transactions] of byProject) {
        for (const [transaction, row] of transactions) {
          if (!stored.has(transactionKey(project, transaction))) rows.push(row);
        }
      }
      await warehouse.insert('revenue', rows);
      await warehouse.insert(
        'record_ids',
        fresh.map((i) => recordIdRow(i.message.record)),
      );
      // The movements of every customer of the batch, all projects together.
      const customers = new Map<string, { project: string; customer: string }>();
      for (const { row } of items) {
        const key = `${row.project_id}\u0000${row.customer_id}`;
        if (!customers.has(key)) customers.set(key, { project: row.project_id, customer: row.customer_id });
      }
      // Computed from what it read: written only while this consumer still holds the customers' partitions.
      await refreshCustomersMrr(warehouse, [...customers.values()], { beforeWrite: holding?.assert });
    },
  };
}

export function startRevenueConsumer(options: RevenueConsumerOptions): RunningBatchLoop {
  const group = options.group ?? REVENUE_GROUP;
  const consumer = options.log.consumer({ group, topics: ['revenue'] });
  const backfill = backfillAtStart(
    'MRR movements',
    () => backfillMrrMovements(options.warehouse),
    options.logger,
  );
  const lander = revenueLander(options.warehouse);
  const loop = consumeInBatches({
    ...options.batch,
    group,
    consumer,
    deadLetters: options.log.deadLetters,
    lander: landingAfter(backfill, lander),
    logger: options.logger,
    metrics: options.metrics,
    progress: options.progress?.group(group),
    onLanded: (messages, setAside, durationMs) =>
      options.logger?.info(
        { records: messages.length, set_aside: setAside.length, duration_ms: durationMs },
        'revenue batch landed',
      ),
  });
  return {
    done: loop.done.finally(() => consumer.close()),
    stop: async () => {
      await loop.stop();
      await backfill.settled();
    },
  };
}
