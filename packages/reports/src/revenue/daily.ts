// The MRR report per day: for each UTC calendar day of a bounded range and each currency, MRR and ARR at the
// end of the day, paying customers, the day's movements and cash revenue. Days are UTC like the monthly
// report's months (monthly.ts), and the fold is the same one (MrrLedger over the records in the
// order of their own timestamps), so the last day of a month has exactly the month's mrr_end and a month's
// daily movements add up exactly to its monthly movements (BigInt micro-units, no rounding).
import { formatMicros } from '@tally/contract';
import { DAY_MS, utcDayOf, utcDayStart } from '../calendar.ts';
import { memoOnFrozen } from './history.ts';
import { byRecordTime, type MovementKind, type MrrInput, MrrLedger } from './ledger.ts';
import type { Money } from './money.ts';
import { RevenueQueryError } from './scope.ts';

export interface DailyRevenue {
  /** YYYY-MM-DD (UTC) */
  date: string;
  currency: string;
  /** MRR at the end of the day. */
  mrr: Money;
  /** MRR × 12 at the end of the day. */
  arr: Money;
  /** Customers with MRR above zero at the end of the day. */
  paying_customers: number;
  new: Money;
  expansion: Money;
  reactivation: Money;
  contraction: Money;
  churn: Money;
  /** MRR at the end of the day − MRR at its start. */
  net_new: Money;
  /** Sum of amount over the day's records (refunds and churns with negative amounts subtract). */
  cash_revenue: Money;
}

/** At most this many days in one daily query (a leap year and a day). */
export const MAX_REVENUE_DAYS = 366;

/** Checks a day range: real days (YYYY-MM-DD), `from` not after `to`, at most MAX_REVENUE_DAYS days. */
export function checkDayRange(from: string, to: string): void {
  const start = utcDayStart(from);
  const end = utcDayStart(to);
  if (Number.isNaN(start)) throw new RevenueQueryError('from must be a day YYYY-MM-DD');
  if (Number.isNaN(end)) throw new RevenueQueryError('to must be a day YYYY-MM-DD');
  if (start > end) throw new RevenueQueryError('from must not be after to');
  if ((end - start) / DAY_MS + 1 > MAX_REVENUE_DAYS)
    throw new RevenueQueryError(`a daily revenue range covers at most ${MAX_REVENUE_DAYS} days`);
}

const reports = new WeakMap<readonly MrrInput[], Map<string, readonly DailyRevenue[]>>();

/**
 * The daily report over days `from`…`to` (YYYY-MM-DD, inclusive; checked by checkDayRange) for every
 * currency in `records`, or for `currencies` when given, or in USD when there are no records. Sorted by
 * date, then currency. Of a frozen array (the cached history) computed once per range and shared.
 */
export function dailyRevenue(
  records: readonly MrrInput[],
  from: string,
  to: string,
  currencies?: readonly string[],
): DailyRevenue[] {
  checkDayRange(from, to);
  if (!Object.isFrozen(records)) return computeDailyRevenue(records, from, to, currencies);
  return memoOnFrozen(reports, records, `${from}|${to}|${currencies?.join(',') ?? '*'}`, () =>
    Object.freeze(computeDailyRevenue(records, from, to, currencies)),
  ) as DailyRevenue[];
}

function computeDailyRevenue(
  records: readonly MrrInput[],
  from: string,
  to: string,
  currencies?: readonly string[],
): DailyRevenue[] {
  const first = utcDayStart(from);
  const last = utcDayStart(to);
  const found = [...new Set(records.map((r) => r.currency))].sort();
  const wanted = currencies ?? (found.length > 0 ? found : ['USD']);
  const report: DailyRevenue[] = [];
  for (const currency of wanted) {
    const ordered = records.filter((r) => r.currency === currency).sort(byRecordTime);
    const ledger = new MrrLedger(currency);
    // Paying customers counted as the movements say, instead of scanning every customer each day: a
    // customer starts paying on a movement from 0 to above 0 and stops on one back to 0.
    let paying = 0;
    const apply = (record: MrrInput) => {
      const result = ledger.apply(record);
      const m = result.movement;
      if (m) paying += (m.next > 0n ? 1 : 0) - (m.prev > 0n ? 1 : 0);
      return result;
    };
    let next = 0;
    for (; next < ordered.length && (ordered[next] as MrrInput).timestamp < first; next++) {
      apply(ordered[next] as MrrInput);
    }
    for (let start = first; start <= last; start += DAY_MS) {
      const end = start + DAY_MS;
      const mrrStart = ledger.total;
      const sums: Record<MovementKind, bigint> = {
        new: 0n,
        expansion: 0n,
        reactivation: 0n,
        contraction: 0n,
        churn: 0n,
      };
      let cash = 0n;
      for (; next < ordered.length && (ordered[next] as MrrInput).timestamp < end; next++) {
        const record = ordered[next] as MrrInput;
        const { movement } = apply(record);
        if (movement) sums[movement.kind] += movement.amount;
        cash += record.amount;
      }
      const mrr = ledger.total;
      report.push({
        date: utcDayOf(start),
        currency,
        mrr: formatMicros(mrr),
        arr: formatMicros(mrr * 12n),
        paying_customers: paying,
        new: formatMicros(sums.new),
        expansion: formatMicros(sums.expansion),
        reactivation: formatMicros(sums.reactivation),
        contraction: formatMicros(sums.contraction),
        churn: formatMicros(sums.churn),
        net_new: formatMicros(mrr - mrrStart),
        cash_revenue: formatMicros(cash),
      });
    }
  }
  return report.sort((a, b) =>
    a.date < b.date
      ? -1
      : a.date > b.date
        ? 1
        : a.currency < b.currency
          ? -1
          : a.currency > b.currency
            ? 1
            : 0,
  );
}
