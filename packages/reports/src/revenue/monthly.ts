// The monthly revenue report of docs/revenue.md: per calendar month (UTC) and currency, MRR at the
// start and end, the movements, net new MRR, the churn rates, ARPA and cash revenue. Computed from the
// deduplicated revenue records (revenue_records: one per project and transaction_id) by folding them in
// the order of their own timestamps (see ledger.ts). Currencies are never added together.
// Sums are exact (BigInt micro-units); money is reported as exact decimal text (Money), which no JSON
// number could hold for every total.
import { divideRounded, formatMicros } from '@tally/contract';
import type { Warehouse } from '@tally/warehouse';
import { addMonths, monthStart, monthsBetween } from '../calendar.ts';
import { memoOnFrozen, readMrrInputs } from './history.ts';
import { byRecordTime, type DataWarning, type MovementKind, type MrrInput, MrrLedger } from './ledger.ts';
import { type Money, rate } from './money.ts';

export interface MonthlyRevenue {
  /** YYYY-MM */
  month: string;
  currency: string;
  mrr_start: Money;
  new: Money;
  expansion: Money;
  reactivation: Money;
  contraction: Money;
  churn: Money;
  mrr_end: Money;
  net_new: Money;
  /** (churn + contraction) / MRR at the start; null when that is 0. */
  gross_revenue_churn_rate: number | null;
  /** (churn + contraction − expansion − reactivation) / MRR at the start; null when that is 0. */
  net_revenue_churn_rate: number | null;
  /** Customers paying at the start and not at the end / customers paying at the start; null when none. */
  customer_churn_rate: number | null;
  /** MRR at the end / customers paying at the end, to the micro-unit; null when none. */
  arpa: Money | null;
  /**
   * Lifetime value: MRR at the end ÷ paying customers at the end ÷ the mean customer churn rate of this
   * month and the two before (months without a rate left out), exact and rounded once to the micro-unit;
   * null when no paying customer, no month has a rate, or the mean is 0.
   */
  ltv: Money | null;
  /** Sum of amount over every record of the month (refunds and churns with negative amounts subtract). */
  cash_revenue: Money;
  customers_start: number;
  customers_end: number;
  churned_customers: number;
  data_warnings: DataWarning[];
}

/**
 * The report over months `from`…`to` (YYYY-MM, inclusive) for every currency in `records`, or for
 * `currencies` when given (a currency without records still gets its months, all zero), or in USD when
 * there are no records.
 */
export function monthlyRevenue(
  records: readonly MrrInput[],
  from: string,
  to: string,
  currencies?: readonly string[],
): MonthlyRevenue[] {
  // Of a frozen array (the cached history), computed once per range and shared, frozen: callers only read it.
  // Two months before `from` are folded too: LTV reads the churn rates of a month and the two before it.
  const early = addMonths(from, -LTV_MONTHS + 1);
  if (!Object.isFrozen(records)) return shapeReport(monthlySums(records, early, to, currencies), from);
  return memoOnFrozen(reports, records, `${from}|${to}|${currencies?.join(',') ?? '*'}`, () =>
    Object.freeze(shapeReport(monthSumsOf(records, early, to, currencies), from)),
  ) as MonthlyRevenue[];
}

const reports = new WeakMap<readonly MrrInput[], Map<string, readonly MonthlyRevenue[]>>();
const sumsMemo = new WeakMap<readonly MrrInput[], Map<string, MonthSums[]>>();
/** Each warning's record (for the fold's order when a refreshed history's sums are derived). */
const warningRecords = new WeakMap<DataWarning, MrrInput>();

/** One month of one currency before it is shaped: every figure is a sum over customers. */
interface MonthSums {
  month: string;
  currency: string;
  mrrStart: bigint;
  mrrEnd: bigint;
  sums: Record<MovementKind, bigint>;
  cash: bigint;
  payingStart: number;
  payingEnd: number;
  churned: number;
  warnings: DataWarning[];
}

/** The currencies a report shows: `currencies`, else those of the records, else USD. */
function wantedCurrencies(records: readonly MrrInput[], currencies?: readonly string[]): string[] {
  if (currencies) return [...currencies];
  const found = new Set<string>();
  for (const r of records) found.add(r.currency);
  return found.size > 0 ? [...found].sort() : ['USD'];
}

/** monthlySums of a frozen history, derived from the earlier history's when it was refreshed from one. */
function monthSumsOf(
  records: readonly MrrInput[],
  from: string,
  to: string,
  currencies?: readonly string[],
): MonthSums[] {
  return memoOnFrozen(
    sumsMemo,
    records,
    `${from}|${to}|${currencies?.join(',') ?? '*'}`,
    () => monthlySums(records, from, to, currencies),
    (previous, change) => {
      // Every figure is a sum over customers, and a customer's part depends on its own records only:
      // the earlier sums, less the changed customers' part before, plus their part now.
      const wanted = wantedCurrencies(records, currencies);
      const before = monthlySums(change.before, from, to, wanted);
      const after = monthlySums(change.after, from, to, wanted);
      if (wantedCurrencies(change.previous, currencies).join(',') !== wanted.join(',')) return undefined;
      if (previous.length !== after.length) return undefined;
      return previous.map((p, i) => {
        const b = before[i] as MonthSums;
        const a = after[i] as MonthSums;
        const sums = { ...p.sums };
        for (const kind of Object.keys(sums) as MovementKind[]) sums[kind] += a.sums[kind] - b.sums[kind];
        const kept = p.warnings.filter((w) => !change.customers.has(w.customer_id));
        const warnings = [...kept, ...a.warnings].sort((x, y) =>
          byRecordTime(warningRecords.get(x) as MrrInput, warningRecords.get(y) as MrrInput),
        );
        return {
          month: p.month,
          currency: p.currency,
          mrrStart: p.mrrStart - b.mrrStart + a.mrrStart,
          mrrEnd: p.mrrEnd - b.mrrEnd + a.mrrEnd,
          sums,
          cash: p.cash - b.cash + a.cash,
          payingStart: p.payingStart - b.payingStart + a.payingStart,
          payingEnd: p.payingEnd - b.payingEnd + a.payingEnd,
          churned: p.churned - b.churned + a.churned,
          warnings,
        };
      });
    },
  );
}

/** The fold of months from…to per currency, sorted by month (currencies in `wanted`'s order within one). */
function monthlySums(
  records: readonly MrrInput[],
  from: string,
  to: string,
  currencies?: readonly string[],
): MonthSums[] {
  const months = monthsBetween(from, to);
  // Every month is reported: in the contract's default currency when there are no records at all.
  const wanted = wantedCurrencies(records, currencies);
  const report: MonthSums[] = [];
  for (const currency of wanted) {
    const ordered = records.filter((r) => r.currency === currency).sort(byRecordTime);
    const ledger = new MrrLedger(currency);
    let next = 0; // index of the next record to apply
    for (const month of months) {
      const start = monthStart(month);
      const end = monthStart(month, 1);
      for (; next < ordered.length && (ordered[next] as MrrInput).timestamp < start; next++) {
        ledger.apply(ordered[next] as MrrInput);
      }
      const mrrStart = ledger.total;
      const payingAtStart = ledger.payingCustomers();
      const sums = { new: 0n, expansion: 0n, reactivation: 0n, contraction: 0n, churn: 0n };
      const warnings: DataWarning[] = [];
      let cash = 0n;
      for (; next < ordered.length && (ordered[next] as MrrInput).timestamp < end; next++) {
        const record = ordered[next] as MrrInput;
        const { movement, warning } = ledger.apply(record);
        if (movement) sums[movement.kind] += movement.amount;
        if (warning) {
          warningRecords.set(warning, record);
          warnings.push(warning);
        }
        cash += record.amount;
      }
      const payingAtEnd = ledger.payingCustomers();
      report.push({
        month,
        currency,
        mrrStart,
        mrrEnd: ledger.total,
        sums,
        cash,
        payingStart: payingAtStart.size,
        payingEnd: payingAtEnd.size,
        churned: [...payingAtStart].filter((c) => !payingAtEnd.has(c)).length,
        warnings,
      });
    }
  }
  return report.sort((a, b) => (a.month < b.month ? -1 : a.month > b.month ? 1 : 0));
}

/** The months whose customer churn rates LTV averages: the month and the two before it. */
const LTV_MONTHS = 3;

/**
 * LTV of `months[i]` (docs/revenue.md): (MRR end ÷ paying end) ÷ mean(churned_j ÷ paying start_j) over the
 * month and the LTV_MONTHS − 1 before it of the same currency that have a rate. As one exact fraction,
 * mrrEnd × n × Π start_j ÷ (paying end × Σ_j churned_j × Π_{k≠j} start_k), rounded once to the micro-unit.
 */
function lifetimeValue(byKey: ReadonlyMap<string, MonthSums>, row: MonthSums): bigint | null {
  const window: MonthSums[] = [];
  for (let back = 0; back < LTV_MONTHS; back++) {
    const m = byKey.get(`${row.currency}|${addMonths(row.month, -back)}`);
    if (m) window.push(m);
  }
  return lifetimeValueMicros(row.mrrEnd, row.payingEnd, window);
}

/**
 * The LTV fraction (above) from a month's MRR at the end (micro-units) and paying customers at the end, and
 * the counts of the months it averages (those without paying customers at the start are left out); null
 * where it is undefined. The converted MRR report (exchange-rates.ts) computes its LTV with it too.
 */
export function lifetimeValueMicros(
  mrrEnd: bigint,
  payingEnd: number,
  months: ReadonlyArray<{ payingStart: number; churned: number }>,
): bigint | null {
  if (payingEnd === 0) return null;
  const rated = months.filter((m) => m.payingStart > 0);
  if (rated.length === 0) return null;
  let product = 1n;
  for (const m of rated) product *= BigInt(m.payingStart);
  let churnSum = 0n; // Σ churned_j × Π_{k≠j} start_k: the rates' sum over the common denominator `product`
  for (const m of rated) churnSum += (BigInt(m.churned) * product) / BigInt(m.payingStart);
  if (churnSum === 0n) return null;
  return divideRounded(mrrEnd * BigInt(rated.length) * product, BigInt(payingEnd) * churnSum);
}

function shapeReport(all: readonly MonthSums[], from: string): MonthlyRevenue[] {
  const byKey = new Map(all.map((m) => [`${m.currency}|${m.month}`, m]));
  return all
    .filter((m) => m.month >= from)
    .map(({ month, currency, mrrStart, mrrEnd, sums, cash, payingStart, payingEnd, churned, warnings }) => ({
      month,
      currency,
      mrr_start: formatMicros(mrrStart),
      new: formatMicros(sums.new),
      expansion: formatMicros(sums.expansion),
      reactivation: formatMicros(sums.reactivation),
      contraction: formatMicros(sums.contraction),
      churn: formatMicros(sums.churn),
      mrr_end: formatMicros(mrrEnd),
      net_new: formatMicros(mrrEnd - mrrStart),
      gross_revenue_churn_rate: rate(sums.churn + sums.contraction, mrrStart),
      net_revenue_churn_rate: rate(
        sums.churn + sums.contraction - sums.expansion - sums.reactivation,
        mrrStart,
      ),
      customer_churn_rate: rate(BigInt(churned), BigInt(payingStart)),
      arpa: payingEnd === 0 ? null : formatMicros(divideRounded(mrrEnd, BigInt(payingEnd))),
      ltv: ((v) => (v === null ? null : formatMicros(v)))(
        lifetimeValue(byKey, byKey.get(`${currency}|${month}`) as MonthSums),
      ),
      cash_revenue: formatMicros(cash),
      customers_start: payingStart,
      customers_end: payingEnd,
      churned_customers: churned,
      data_warnings: [...warnings],
    }));
}

/** `tally report mrr`: the monthly report of one project, from the warehouse. */
export async function mrrReport(
  warehouse: Warehouse,
  options: { project: string; from: string; to: string; currency?: string | undefined },
): Promise<MonthlyRevenue[]> {
  const currency = options.currency?.toUpperCase();
  const records = await readMrrInputs(warehouse, {
    project: options.project,
    until: monthStart(options.to, 1),
    currency,
  });
  return monthlyRevenue(records, options.from, options.to, currency ? [currency] : undefined);
}
