// How a revenue record becomes a row of the revenue table (schemas/clickhouse/003_revenue.sql): every
// field in a typed column, metadata as Map(String, String) for search, and the whole validated payload
// as received.
import type { IngestRecordOf } from '@tally/contract';

/** Largest amount a Decimal(38, 6) column is given here; beyond it the number is not money. */
const LARGEST_AMOUNT = 1e20;

/** A number as exact decimal text with the column's scale (6), or null when it is not storable. */
export function decimalText(value: number): string | null {
  if (!Number.isFinite(value) || Math.abs(value) >= LARGEST_AMOUNT) return null;
  return value.toFixed(6);
}

function stringMap(value: unknown): Record<string, string> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return {};
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v ?? null)]),
  );
}

export interface RevenueRowResult {
  row: Record<string, unknown>;
  /** Set when a number could not be stored as a decimal (then stored as 0; the payload keeps it). */
  warning: string | null;
}

export function revenueRow(record: IngestRecordOf<'revenue'>): RevenueRowResult {
  const data = record.data;
  const amount = decimalText(data.amount);
  const mrrImpact =
    data.mrr_impact === null || data.mrr_impact === undefined ? null : decimalText(data.mrr_impact);
  const unstorable =
    amount === null || (mrrImpact === null && data.mrr_impact !== null && data.mrr_impact !== undefined);
  return {
    row: {
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
      amount: amount ?? '0',
      currency: (data.currency ?? 'USD').toUpperCase(),
      mrr_impact: mrrImpact,
      is_recurring: data.is_recurring ?? null,
      customer_subscription_id: data.customer_subscription_id ?? '',
      payment_processor: data.payment_processor ?? '',
      metadata: stringMap(data.metadata),
      payload: JSON.stringify(data),
      user_agent: record.user_agent ?? '',
    },
    warning: unstorable
      ? 'amount or mrr_impact out of range: stored as 0 (the payload keeps the number)'
      : null,
  };
}
