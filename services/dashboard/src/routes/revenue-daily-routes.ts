// GET …/revenue/mrr/daily and …/revenue/exchange-rates, and the `convert_to` of the MRR reports: the daily
// MRR report (@tally/reports revenue/daily.ts) from the cached history, and the operator's exchange rates
// (revenue/exchange-rates.ts). A converted answer is one row per period in the rates' base currency, marked
// `converted_to`, with the rates it used and the currencies left out; without rates it is a 400.

import { utcDayEnd } from '@tally/reports/calendar';
import {
  type Converted,
  checkDayRange,
  convertDaily,
  dailyRevenue,
  rateTableFor,
  readExchangeRates,
  readMrrInputsCached,
} from '@tally/reports/revenue';
import type { FastifyInstance } from 'fastify';
import type { DashboardDeps } from '../deps.ts';
import { route } from './route.ts';
import { answer } from './traffic-routes.ts';

interface MrrDailyQuery {
  from: string;
  to: string;
  currency?: string;
  convert_to?: string;
  format?: string;
}

/** A converted row as a CSV line: the rates and the currencies left out as text cells. */
export function convertedCsvRow<T extends Converted>(row: T): Record<string, unknown> {
  const { rates, missing_currencies, ...rest } = row;
  return {
    ...rest,
    rates: rates.map((r) => `${r.currency} ${r.period} ${r.rate}`).join('; '),
    missing_currencies: missing_currencies.join(' '),
  };
}

export function revenueDailyRoutes(app: FastifyInstance, deps: DashboardDeps): void {
  route(app, deps, 'revenueMrrDaily', async (request, reply) => {
    const q = request.query as unknown as MrrDailyQuery;
    checkDayRange(q.from, q.to);
    const currency = q.currency?.toUpperCase();
    // The rates first: a convert_to without rates is refused before the history is read.
    const table = q.convert_to ? await rateTableFor(deps.warehouse, q.convert_to) : null;
    const records = await readMrrInputsCached(deps.warehouse, {
      project: request.params.project as string,
      until: utcDayEnd(q.to),
      currency,
    });
    const report = dailyRevenue(records, q.from, q.to, currency ? [currency] : undefined);
    if (!table)
      return answer(reply, request.headers.accept, q.format, report, () => report as never, 'mrr-daily');
    const converted = convertDaily(report, table);
    return answer(
      reply,
      request.headers.accept,
      q.format,
      converted,
      () => converted.map(convertedCsvRow),
      'mrr-daily',
    );
  });

  route(app, deps, 'revenueExchangeRates', async () => {
    const rates = await readExchangeRates(deps.warehouse);
    return { bases: [...new Set(rates.map((r) => r.base))].sort(), rates };
  });
}
