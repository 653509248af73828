// Customers' names and emails from their revenue records' metadata (`name`, `email`), against real chDB:
// the latest record that has each wins, in any currency; the list searches ids, names and emails, case
// aside; a customer without either has nulls.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate, openChdbWarehouse, type Warehouse } from '@tally/warehouse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revenueCustomerReport, revenueCustomersReport } from './customer-queries.ts';

const dir = mkdtempSync(join(tmpdir(), 'tally-customer-contacts-'));
let warehouse: Warehouse;
const PROJECT = 'contacts';

let n = 0;
const row = (customer: string, date: string, metadata: Record<string, string>, currency = 'USD') => {
  n += 1;
  const at = Date.parse(`${date}T12:00:00Z`);
  return {
    project_id: PROJECT,
    transaction_id: `tx_${n}`,
    id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    timestamp: at,
    received_at: at,
    client_timestamp: at,
    timestamp_clamped: false,
    customer_id: customer,
    visitor_id: '',
    session_id: '',
    event_type: 'subscription',
    amount: '10',
    currency,
    mrr_impact: '10',
    is_recurring: true,
    customer_subscription_id: '',
    payment_processor: 'stripe',
    metadata,
    payload: '{}',
    user_agent: '',
  };
};

beforeAll(async () => {
  warehouse = await openChdbWarehouse({ dataDir: join(dir, 'warehouse'), database: 'tally' });
  await migrate(warehouse);
  await warehouse.insert('revenue', [
    row('cus_1', '2026-01-05', { name: 'Ada Old', email: 'ada@old.example' }),
    row('cus_1', '2026-02-05', { name: 'Ada Lovelace' }), // the latest name; the email stays the older one
    row('cus_1', '2026-03-05', { plan: 'pro' }), // no contact: changes nothing
    row('cus_2', '2026-01-10', { email: 'GRACE@navy.example' }, 'EUR'), // in another currency: still hers
    row('cus_2', '2026-01-11', {}),
    row('cus_3', '2026-01-12', {}),
  ]);
}, 60_000);

afterAll(async () => {
  await warehouse?.close();
  rmSync(dir, { recursive: true, force: true });
});

const list = (search?: string) =>
  revenueCustomersReport(warehouse, {
    project: PROJECT,
    currency: 'USD',
    filters: [],
    search,
    sort: 'customer_id',
  });

describe('customer names and emails', () => {
  it('takes each from the latest record that has it, in any currency; null without', async () => {
    const { customers } = await list();
    expect(customers.map((c) => [c.customer_id, c.name, c.email])).toEqual([
      ['cus_1', 'Ada Lovelace', 'ada@old.example'],
      ['cus_2', null, 'GRACE@navy.example'],
      ['cus_3', null, null],
    ]);
    const one = await revenueCustomerReport(warehouse, { project: PROJECT, customer_id: 'cus_1' });
    expect(one?.summaries.map((s) => [s.name, s.email])).toEqual([['Ada Lovelace', 'ada@old.example']]);
  });

  it('searches ids, names and emails, case aside', async () => {
    const ids = async (search: string) => (await list(search)).customers.map((c) => c.customer_id);
    expect(await ids('lovelace')).toEqual(['cus_1']);
    expect(await ids('grace@NAVY')).toEqual(['cus_2']);
    expect(await ids('CUS_3')).toEqual(['cus_3']);
    expect(await ids('cus_')).toEqual(['cus_1', 'cus_2', 'cus_3']);
    expect(await ids('old.example')).toEqual(['cus_1']);
    expect(await ids('nobody')).toEqual([]);
    expect((await list('lovelace')).total).toBe(1);
  });
});
