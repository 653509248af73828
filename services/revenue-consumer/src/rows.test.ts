// How a revenue record becomes a row: every field kept, money as exact decimal text, metadata as a
// string map for search, and numbers a Decimal column cannot hold stored as 0 with a warning.
import type { IngestRecordOf } from '@tally/contract';
import { expect, it } from 'vitest';
import { decimalText, revenueRow } from './rows.ts';

const record = (data: Partial<IngestRecordOf<'revenue'>['data']>): IngestRecordOf<'revenue'> => ({
  id: 'r1',
  type: 'revenue',
  project_id: 'p',
  received_at: 1_767_571_200_000,
  timestamp: 1_767_571_200_000,
  client_timestamp: null,
  timestamp_clamped: false,
  user_agent: null,
  visitor_fingerprint_derived: false,
  data: {
    visitor_fingerprint: 'v',
    session_id: 's',
    customer_id: 'c',
    amount: 49.99,
    transaction_id: 'in_1',
    ...data,
  },
});

it('keeps every field, with currency upper-case and metadata as strings', () => {
  const { row, warning } = revenueRow(
    record({ currency: 'eur', mrr_impact: -20, is_recurring: true, metadata: { plan: 'pro', seats: 3 } }),
  );
  expect(warning).toBeNull();
  expect(row).toMatchObject({
    transaction_id: 'in_1',
    customer_id: 'c',
    amount: '49.990000',
    currency: 'EUR',
    mrr_impact: '-20.000000',
    is_recurring: true,
    event_type: '',
    customer_subscription_id: '',
    metadata: { plan: 'pro', seats: '3' },
  });
  expect(JSON.parse(row.payload as string)).toMatchObject({
    metadata: { plan: 'pro', seats: 3 },
    currency: 'eur',
  });
});

it('stores an amount no Decimal column holds as 0, keeps it in the payload, and warns', () => {
  expect(decimalText(1e300)).toBeNull();
  const { row, warning } = revenueRow(record({ amount: 1e300 }));
  expect(row.amount).toBe('0');
  expect(warning).toMatch(/out of range/);
});
