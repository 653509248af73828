// How a revenue record becomes a row: every field kept, money as its exact decimal text, metadata as a
// string map for search (non-strings as JSON, null included), and the payload as received.
import type { IngestRecordOf } from '@tally/contract';
import { anIngestRecord } from '@tally/log/testing';
import { expect, it } from 'vitest';
import { revenueRow } from './rows.ts';

const record = (data: Partial<IngestRecordOf<'revenue'>['data']>) =>
  anIngestRecord('revenue', {
    id: 'r1',
    project_id: 'p',
    received_at: 1_767_571_200_000,
    timestamp: 1_767_571_200_000,
    user_agent: null,
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
  const row = revenueRow(
    record({
      currency: 'eur',
      mrr_impact: -20,
      is_recurring: true,
      metadata: { plan: 'pro', seats: 3, coupon: null },
    }),
  );
  expect(row).toMatchObject({
    transaction_id: 'in_1',
    customer_id: 'c',
    amount: '49.99',
    currency: 'EUR',
    mrr_impact: '-20',
    is_recurring: true,
    event_type: '',
    customer_subscription_id: '',
    metadata: { plan: 'pro', seats: '3', coupon: 'null' },
  });
  expect(JSON.parse(row.payload)).toMatchObject({
    metadata: { plan: 'pro', seats: 3 },
    currency: 'eur',
  });
});

it('writes money exactly, without exponents, at the bounds of the contract', () => {
  expect(revenueRow(record({ amount: 0.000001, mrr_impact: 999_999_999_999_999 }))).toMatchObject({
    amount: '0.000001',
    mrr_impact: '999999999999999',
  });
});

it('refuses money it could not store exactly, rather than storing something else', () => {
  expect(() => revenueRow(record({ amount: 1e25 }))).toThrow(RangeError);
  expect(() => revenueRow(record({ amount: 0.0000004 }))).toThrow(RangeError);
});
