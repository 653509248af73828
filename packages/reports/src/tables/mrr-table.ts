// Keeps the mrr_movements table (schemas/clickhouse/005_mrr.sql) equal to the fold of revenue/ledger.ts
// over each customer's whole history. The fold's state is per customer (their subscriptions' MRR,
// whether they ever paid), so recomputing only the customers a batch touched gives exactly what a fold
// over every record would. Rows are written with a new version; movements that no longer exist (a late
// record re-classified them) are written as deleted. Idempotent: running it again writes the same state.
import { formatMicros } from '@tally/contract';
import { crossProjectLookups, type RowOf, type Warehouse } from '@tally/warehouse';
import { readMrrInputsOfCustomers } from '../revenue/history.ts';
import { mrrMovements } from '../revenue/ledger.ts';

/** Customers recomputed per query at most, so that the IN list (its size too: parameter-lists.ts) and the history read stay bounded. */
const CUSTOMERS_PER_QUERY = 2000;

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
export function refreshMrrMovements(
  warehouse: Warehouse,
  project: string,
  customers: readonly string[],
): Promise<number> {
  return refreshCustomersMrr(
    warehouse,
    customers.map((customer) => ({ project, customer })),
  );
}

/**
 * Recomputes the MRR movements of some customers of any projects (a batch's), every project together: a
 * lookup of a few statements per list of customers (crossProjectLookups), not per project, where a
 * connection runs one statement at a time (chDB). Resolves to how many movements they have.
 */
export async function refreshCustomersMrr(
  warehouse: Warehouse,
  customers: readonly { project: string; customer: string }[],
  options: {
    /**
     * Called right before movements are written: throws to write nothing (the consumer no longer holds
     * these customers' partitions; their new holder computes them again from what it reads).
     */
    beforeWrite?: (() => void) | undefined;
  } = {},
): Promise<number> {
  let total = 0;
  const lookups = crossProjectLookups(
    customers,
    (c) => c.customer,
    CUSTOMERS_PER_QUERY,
    warehouse.listParameterBytes,
  );
  for (const { items } of lookups) {
    const asked = new Set(items.map(({ project, customer }) => pairKey(project, customer)));
    const histories = await readMrrInputsOfCustomers(warehouse, items);
    const existing = await warehouse.query<{
      project_id: string;
      customer_id: string;
      transaction_id: string;
    }>(
      `SELECT project_id, customer_id, transaction_id FROM mrr_movements_current
       WHERE project_id IN {projects:Array(String)} AND customer_id IN {customers:Array(String)}`,
      {
        projects: [...new Set(items.map((c) => c.project))],
        customers: [...new Set(items.map((c) => c.customer))],
      },
    );
    const version = nextVersion();
    const rows: MrrMovementRow[] = [];
    const live = new Set<string>();
    for (const [project, inputs] of histories) {
      const { movements } = mrrMovements(inputs);
      total += movements.length;
      for (const m of movements) {
        live.add(`${pairKey(project, m.customer_id)}\u0000${m.transaction_id}`);
        rows.push({
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
        });
      }
    }
    for (const old of existing) {
      const customer = pairKey(old.project_id, old.customer_id);
      // A movement of a customer its project did not ask for is left as it is.
      if (!asked.has(customer) || live.has(`${customer}\u0000${old.transaction_id}`)) continue;
      rows.push({
        project_id: old.project_id,
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
    if (rows.length > 0) {
      options.beforeWrite?.();
      await warehouse.insert('mrr_movements', rows);
    }
  }
  return total;
}

const pairKey = (project: string, customer: string) => `${project}\u0000${customer}`;

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
  const customers = pairs.flatMap(({ project_id, customers }) =>
    customers.map((customer) => ({ project: project_id, customer })),
  );
  await refreshCustomersMrr(warehouse, customers);
  return customers.length;
}
