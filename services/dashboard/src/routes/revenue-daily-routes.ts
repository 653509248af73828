// GET …/revenue/mrr/daily, …/revenue/currencies and …/revenue/exchange-rates, and the CSV of a converted MRR
// report: the daily MRR report and the project's currencies (revenueMrrDailyReport and
// revenueCurrenciesReport of @tally/reports/queries, which `tally report` calls too), and the operator's
// exchange rates (revenue/exchange-rates.ts). A converted answer is one row per period in the rates' base currency, marked
// `converted_to`, with the rates it used and the currencies left out; without rates it is a 400.

import { revenueCurrenciesReport, revenueMrrDailyReport } from '@tally/reports/queries';
import {
  type ConvertedDay,
  type ConvertedMonth,
  type DailyRevenue,
  type MonthlyRevenue,
  readExchangeRates,
} from '@tally/reports/revenue';
import type { FastifyInstance } from 'fastify';
import { annotationsByBucket } from '../annotation-buckets.ts';
import { wantsCsv } from '../csv.ts';
import type { DashboardDeps } from '../deps.ts';
import { route } from './route.ts';
import { answer } from './traffic-routes.ts';

/**
 * A row of an MRR report as a CSV line: a converted row's rates and currencies left out as text cells, and
 * last the `annotation` column, the project's notes of the row's month or day (`notes`, by bucket).
 */
export function mrrCsvRow(row: MrrRow, notes: ReadonlyMap<string, string>): object {
  const annotation = notes.get('month' in row ? `${row.month}-01` : row.date) ?? '';
  if (!('converted_to' in row)) return { ...row, annotation };
  const { rates, missing_currencies, ...rest } = row;
  return {
    ...rest,
    rates: rates.map((r) => `${r.currency} ${r.period} ${r.rate}`).join('; '),
    missing_currencies: missing_currencies.join(' '),
    annotation,
  };
}

/**
 * The project's notes per month (`YYYY-MM-01`) or day of an MRR report's CSV, placed in UTC as revenue
 * months and days are (the revenue charts place them so too); read only when CSV is asked.
 */
export async function mrrCsvNotes(
  deps: DashboardDeps,
  project: string,
  buckets: readonly string[],
  lastDay: string,
  csv: boolean,
): Promise<Map<string, string>> {
  if (!csv) return new Map();
  return annotationsByBucket([...new Set(buckets)], lastDay, await deps.projects.annotations(project), 'UTC');
}

/** A row of the MRR reports, monthly or daily, converted or not. */
export type MrrRow = MonthlyRevenue | ConvertedMonth | DailyRevenue | ConvertedDay;

export function revenueDailyRoutes(app: FastifyInstance, deps: DashboardDeps): void {
  route(app, deps, 'revenueMrrDaily', async (request, reply) => {
    const q = request.query;
    const body = await revenueMrrDailyReport(deps.warehouse, {
      project: request.params.project,
      from: q.from,
      to: q.to,
      currency: q.currency,
      convert_to: q.convert_to,
    });
    const rows: readonly MrrRow[] = body;
    const csv = wantsCsv(q.format, request.headers.accept);
    const dates = rows.map((r) => ('date' in r ? r.date : ''));
    const notes = await mrrCsvNotes(deps, request.params.project, dates, q.to, csv);
    return answer(
      reply,
      request.headers.accept,
      q.format,
      body,
      () => rows.map((r) => mrrCsvRow(r, notes)),
      'mrr-daily',
    );
  });

  route(app, deps, 'revenueCurrencies', async (request) =>
    revenueCurrenciesReport(deps.warehouse, { project: request.params.project }),
  );

  route(app, deps, 'revenueExchangeRates', async () => {
    const rates = await readExchangeRates(deps.warehouse);
    return { bases: [...new Set(rates.map((r) => r.base))].sort(), rates };
  });
}
