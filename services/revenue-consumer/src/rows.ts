// How a revenue record becomes a row of the revenue table (schemas/clickhouse/003_revenue.sql): every
// field in a typed column, money as its exact decimal text (the contract admits only money a Decimal(38, 6)
// holds exactly), metadata as Map(String, String) for search, and the whole validated payload as received.
import { stringMap } from '@tally/consumer';
import { type IngestRecordOf, moneyText } from '@tally/contract';
import type { RowOf } from '@tally/warehouse';

/** The columns of revenue the consumer writes (first_received_version is MATERIALIZED by the table). */
export const REVENUE_COLUMNS = {
  project_id: 'String',
  transaction_id: 'String',
  id: 'String',
  timestamp: 'DateTime64',
  received_at: 'DateTime64',
  client_timestamp: 'Nullable(DateTime64)',
  timestamp_clamped: 'Bool',
  customer_id: 'String',
  visitor_id: 'String',
  session_id: 'String',
  event_type: 'String',
  amount: 'Decimal',
  currency: 'String',
  mrr_impact: 'Nullable(Decimal)',
  is_recurring: 'Nullable(Bool)',
  customer_subscription_id: 'String',
  payment_processor: 'String',
  metadata: 'Map(String, String)',
  payload: 'String',
  user_agent: 'String',
} as const;

export type RevenueRow = RowOf<typeof REVENUE_COLUMNS>;

export function revenueRow(record: IngestRecordOf<'revenue'>): RevenueRow {
  const data = record.data;
  return {
    project_id: record.project_id,
    transaction_id: data.transaction_id,
    id: record.id,
    timestamp: record.timestamp,
    received_at: record.received_at,
    client_timestamp: record.client_timestamp,
    timestamp_clamped: record.timestamp_clamped,
    customer_id: data.customer_id,
    visitor_id: data.visitor_fingerprint,
    session_id: data.session_id,
    event_type: data.event_type ?? '',
    amount: moneyText(data.amount),
    currency: (data.currency ?? 'USD').toUpperCase(),
    mrr_impact: data.mrr_impact === null || data.mrr_impact === undefined ? null : moneyText(data.mrr_impact),
    is_recurring: data.is_recurring ?? null,
    customer_subscription_id: data.customer_subscription_id ?? '',
    payment_processor: data.payment_processor ?? '',
    metadata: stringMap(data.metadata),
    payload: JSON.stringify(data),
    user_agent: record.user_agent ?? '',
  };
}
