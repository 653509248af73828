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
import type { DashboardDeps } from '../deps.ts';
import { route } from './route.ts';
import { answer } from './traffic-routes.ts';

/** A row of an MRR report as a CSV line: a converted row's rates and currencies left out as text cells. */
export function mrrCsvRow(row: MrrRow): object {
  if (!('converted_to' in row)) return row;
  const { rates, missing_currencies, ...rest } = row;
  return {
    ...rest,
    rates: rates.map((r) => `${r.currency} ${r.period} ${r.rate}`).join('; '),
    missing_currencies: missing_currencies.join(' '),
  };
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
    return answer(reply, request.headers.accept, q.format, body, () => rows.map(mrrCsvRow), 'mrr-daily');
  });

  route(app, deps, 'revenueCurrencies', async (request) =>
    revenueCurrenciesReport(deps.warehouse, { project: request.params.project }),
  );

  route(app, deps, 'revenueExchangeRates', async () => {
    const rates = await readExchangeRates(deps.warehouse);
    return { bases: [...new Set(rates.map((r) => r.base))].sort(), rates };
  });
}
