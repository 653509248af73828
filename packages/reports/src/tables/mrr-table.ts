// Keeps the mrr_movements table (schemas/clickhouse/005_mrr.sql) equal to the fold of revenue/ledger.ts
// over each customer's whole history. The fold's state is per customer (their subscriptions' MRR,
// whether they ever paid), so recomputing only the customers a batch touched gives exactly what a fold
// over every record would. Rows are written with a new version; movements that no longer exist (a late
// record re-classified them) are written as deleted. Idempotent: running it again writes the same state.
import { formatMicros } from '@tally/contract';
import { parameterLists, type RowOf, type Warehouse } from '@tally/warehouse';
import { readMrrInputs } from '../revenue/history.ts';
import { mrrMovements } from '../revenue/ledger.ts';

/** Customers recomputed per query at most, so that the IN list (its size too: parameter-lists.ts) and the history read stay bounded. */
const CUSTOMERS_PER_QUERY = 500;

/** The columns of mrr_movements (005_mrr.sql): money as exact decimal text. */
export const MRR_MOVEMENT_COLUMNS = {
  project_id: 'String',
  customer_id: 'String',
  transaction_id: 'String',
  currency: 'String',
  timestamp: 'DateTime64',
  movement: 'String',
  amount: 'Decimal',
  mrr_before: 'Decimal',
  mrr_after: 'Decimal',
  version: 'UInt64',
  is_deleted: 'UInt8',
} as const;

export type MrrMovementRow = RowOf<typeof MRR_MOVEMENT_COLUMNS>;

let lastVersion = 0;
/** Increasing within this process and across restarts (milliseconds × 1000, plus a counter). */
function nextVersion(): number {
  lastVersion = Math.max(lastVersion + 1, Date.now() * 1000);
  return lastVersion;
}

/** Recomputes the MRR movements of `customers` of `project`; resolves to how many movements they have. */
export async function refreshMrrMovements(
  warehouse: Warehouse,
  project: string,
  customers: readonly string[],
): Promise<number> {
  let total = 0;
  for (const chunk of parameterLists(customers, CUSTOMERS_PER_QUERY)) {
    const inputs = await readMrrInputs(warehouse, { project, customers: chunk });
    const { movements } = mrrMovements(inputs);
    const existing = await warehouse.query<{ customer_id: string; transaction_id: string }>(
      `SELECT customer_id, transaction_id FROM mrr_movements_current
       WHERE project_id = {project:String} AND customer_id IN {customers:Array(String)}`,
      { project, customers: chunk },
    );
    const version = nextVersion();
    const rows: MrrMovementRow[] = movements.map((m) => ({
      project_id: project,
      customer_id: m.customer_id,
      transaction_id: m.transaction_id,
      currency: m.currency,
      timestamp: m.timestamp,
      movement: m.kind,
      amount: formatMicros(m.amount),
      mrr_before: formatMicros(m.prev),
      mrr_after: formatMicros(m.next),
      version,
      is_deleted: 0,
    }));
    const live = new Set(movements.map((m) => `${m.customer_id}\u0000${m.transaction_id}`));
    for (const old of existing) {
      if (live.has(`${old.customer_id}\u0000${old.transaction_id}`)) continue;
      rows.push({
        project_id: project,
        customer_id: old.customer_id,
        transaction_id: old.transaction_id,
        currency: '',
        timestamp: 0,
        movement: '',
        amount: '0',
        mrr_before: '0',
        mrr_after: '0',
        version,
        is_deleted: 1,
      });
    }
    if (rows.length > 0) await warehouse.insert('mrr_movements', rows);
    total += movements.length;
  }
  return total;
}

/**
 * Fills mrr_movements from the stored revenue when it is empty but revenue is not (a warehouse migrated
 * from before the table existed). Resolves to the number of customers recomputed (0 if nothing to do).
 */
export async function backfillMrrMovements(warehouse: Warehouse): Promise<number> {
  const [movements] = await warehouse.query<{ n: number }>('SELECT count() AS n FROM mrr_movements');
  if ((movements?.n ?? 0) > 0) return 0;
  const pairs = await warehouse.query<{ project_id: string; customers: string[] }>(
    'SELECT project_id, groupUniqArray(customer_id) AS customers FROM revenue GROUP BY project_id',
  );
  let recomputed = 0;
  for (const { project_id, customers } of pairs) {
    await refreshMrrMovements(warehouse, project_id, customers);
    recomputed += customers.length;
  }
  return recomputed;
}
