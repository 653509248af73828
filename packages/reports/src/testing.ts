// Test fixtures shared by the unit tests, the reports' conformance suite and the end-to-end tests: the
// worked example of docs/revenue.md as revenue payloads (what a client sends) and the monthly table
// the spec gives for it.
import type { RevenueData } from '@tally/contract';

/** The example's records, in the spec's order; `timestamp` is noon UTC of the spec's date. */
export function workedExample(prefix: string): RevenueData[] {
  const at = (date: string) => Date.parse(`${date}T12:00:00Z`);
  const record = (
    n: number,
    date: string,
    customer: string,
    event_type: RevenueData['event_type'],
    amount: number,
    mrr_impact: number | undefined,
    extra: Partial<RevenueData> = {},
  ): RevenueData => ({
    visitor_fingerprint: `fp_${customer}`,
    session_id: `s_${customer}`,
    customer_id: customer,
    amount,
    currency: 'USD',
    transaction_id: `${prefix}_tx_${n}`,
    event_type,
    ...(mrr_impact === undefined ? {} : { mrr_impact }),
    timestamp: at(date),
    ...extra,
  });
  return [
    record(1, '2026-01-05', 'A', 'subscription', 100, 100, { is_recurring: true, metadata: { plan: 'pro' } }),
    record(2, '2026-01-10', 'B', 'subscription', 50, 50, { is_recurring: true, metadata: { plan: 'basic' } }),
    record(3, '2026-02-03', 'A', 'upgrade', 50, 50, { metadata: { plan: 'business' } }),
    record(4, '2026-02-20', 'B', 'downgrade', 30, -20, { metadata: { plan: 'starter' } }),
    record(5, '2026-02-25', 'C', 'subscription', 1200, 100, {
      is_recurring: true,
      metadata: { plan: 'pro', interval: 'annual' },
    }),
    record(6, '2026-03-01', 'A', 'renewal', 150, 0, { is_recurring: true }),
    record(7, '2026-03-15', 'B', 'churn', 0, -30),
    record(8, '2026-04-02', 'B', 'subscription', 40, 40, {
      is_recurring: true,
      metadata: { plan: 'starter' },
    }),
    record(9, '2026-04-10', 'D', 'purchase', 500, undefined, { metadata: { plan: 'lifetime' } }),
  ];
}

/**
 * The spec's monthly table (money as exact decimal text, rates as fractions; null where the spec shows —),
 * with LTV as docs/revenue.md works it out (March: 125 ÷ mean(0, 1/3); April: 96.67 ÷ mean(0, 1/3, 0)).
 */
export const WORKED_EXAMPLE_MONTHS = [
  {
    month: '2026-01',
    currency: 'USD',
    mrr_start: '0',
    new: '150',
    expansion: '0',
    reactivation: '0',
    contraction: '0',
    churn: '0',
    mrr_end: '150',
    net_new: '150',
    gross_revenue_churn_rate: null,
    net_revenue_churn_rate: null,
    customer_churn_rate: null,
    arpa: '75',
    ltv: null,
    cash_revenue: '150',
  },
  {
    month: '2026-02',
    currency: 'USD',
    mrr_start: '150',
    new: '100',
    expansion: '50',
    reactivation: '0',
    contraction: '20',
    churn: '0',
    mrr_end: '280',
    net_new: '130',
    gross_revenue_churn_rate: 20 / 150,
    net_revenue_churn_rate: (20 - 50) / 150,
    customer_churn_rate: 0,
    arpa: '93.333333',
    ltv: null,
    cash_revenue: '1280',
  },
  {
    month: '2026-03',
    currency: 'USD',
    mrr_start: '280',
    new: '0',
    expansion: '0',
    reactivation: '0',
    contraction: '0',
    churn: '30',
    mrr_end: '250',
    net_new: '-30',
    gross_revenue_churn_rate: 30 / 280,
    net_revenue_churn_rate: 30 / 280,
    customer_churn_rate: 1 / 3,
    arpa: '125',
    ltv: '750',
    cash_revenue: '150',
  },
  {
    month: '2026-04',
    currency: 'USD',
    mrr_start: '250',
    new: '0',
    expansion: '0',
    reactivation: '40',
    contraction: '0',
    churn: '0',
    mrr_end: '290',
    net_new: '40',
    gross_revenue_churn_rate: 0,
    net_revenue_churn_rate: -40 / 250,
    customer_churn_rate: 0,
    arpa: '96.666667',
    ltv: '870',
    cash_revenue: '540',
  },
] as const;

/** docs/revenue.md's cohort table of the worked example, as the API answers it. */
export const WORKED_EXAMPLE_COHORTS = {
  currency: 'USD',
  cohorts: [
    {
      cohort: '2026-01',
      size: 2,
      months: [
        {
          offset: 0,
          month: '2026-01',
          customers: 2,
          mrr: '150',
          logo_retention: 1,
          net_mrr_retention: 1,
          gross_mrr_retention: 1,
        },
        {
          offset: 1,
          month: '2026-02',
          customers: 2,
          mrr: '180',
          logo_retention: 1,
          net_mrr_retention: 180 / 150,
          gross_mrr_retention: 130 / 150,
        },
        {
          offset: 2,
          month: '2026-03',
          customers: 1,
          mrr: '150',
          logo_retention: 0.5,
          net_mrr_retention: 1,
          gross_mrr_retention: 100 / 150,
        },
        {
          offset: 3,
          month: '2026-04',
          customers: 2,
          mrr: '190',
          logo_retention: 1,
          net_mrr_retention: 190 / 150,
          gross_mrr_retention: 140 / 150,
        },
      ],
    },
    {
      cohort: '2026-02',
      size: 1,
      months: [
        {
          offset: 0,
          month: '2026-02',
          customers: 1,
          mrr: '100',
          logo_retention: 1,
          net_mrr_retention: 1,
          gross_mrr_retention: 1,
        },
        {
          offset: 1,
          month: '2026-03',
          customers: 1,
          mrr: '100',
          logo_retention: 1,
          net_mrr_retention: 1,
          gross_mrr_retention: 1,
        },
        {
          offset: 2,
          month: '2026-04',
          customers: 1,
          mrr: '100',
          logo_retention: 1,
          net_mrr_retention: 1,
          gross_mrr_retention: 1,
        },
      ],
    },
  ],
};

/** mrr_monthly's columns as WORKED_EXAMPLE_MONTHS gives them: money as exact decimal text, ARPA to 6 places. */
export const MRR_MONTHLY_COLUMNS = [
  'substring(toString(month), 1, 7) AS month',
  'currency',
  ...['mrr_start', 'new', 'expansion', 'reactivation', 'contraction', 'churn', 'mrr_end', 'net_new'].map(
    (c) => `toString(${c}) AS ${c}`,
  ),
  'gross_revenue_churn_rate',
  'net_revenue_churn_rate',
  'round(arpa, 6) AS arpa',
].join(', ');

/** The rows mrr_monthly (read with MRR_MONTHLY_COLUMNS) holds for months of the report: no report-only columns. */
export function mrrMonthlyRows(months: readonly (typeof WORKED_EXAMPLE_MONTHS)[number][]) {
  return months.map(({ customer_churn_rate: _c, cash_revenue: _cash, ltv: _ltv, arpa, ...m }) => ({
    ...m,
    arpa: arpa === null ? null : Number(arpa),
  }));
}

/**
 * A stored `revenue` row as the revenue consumer writes it (a renewal of 10 USD without a visitor), with
 * `fields` over the defaults: tests that write the warehouse directly build their rows from it.
 */
export function revenueRow(fields: Record<string, unknown> & { project_id: string; transaction_id: string }) {
  return {
    id: `00000000-0000-4000-8000-${String(fields.transaction_id).replace(/\W/g, '').slice(-12).padStart(12, '0')}`,
    timestamp: '2026-01-10 12:00:00.000',
    received_at: '2026-01-10 12:00:00.000',
    customer_id: 'ann',
    visitor_id: '',
    session_id: '',
    event_type: 'renewal',
    amount: '10',
    currency: 'USD',
    mrr_impact: '0',
    is_recurring: true,
    customer_subscription_id: '',
    payment_processor: 'stripe',
    timestamp_clamped: false,
    metadata: {},
    payload: '{}',
    user_agent: '',
    ...fields,
  };
}
