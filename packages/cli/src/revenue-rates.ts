// `tally report mrr --daily` (or `--interval day`), `--convert-to XXX` of `tally report mrr`, and
// `tally revenue rates load FILE.csv | list`: the daily MRR report and the operator's exchange rates, with the
// same functions as the dashboard's API (@tally/reports revenue/daily.ts, revenue/exchange-rates.ts), so both
// give the same figures. Rates come only from the operator's file: Tally never fetches them.
import { readFileSync } from 'node:fs';
import type { parseArgs as ParseArgs } from 'node:util';
import type { TallyConfig } from '@tally/config';
import { utcDayEnd } from '@tally/reports/calendar';
import {
  type Converted,
  type ConvertedDay,
  checkDayRange,
  convertDaily,
  convertMonthly,
  type DailyRevenue,
  dailyRevenue,
  loadExchangeRates,
  type MonthlyRevenue,
  parseExchangeRatesCsv,
  rateTableFor,
  readExchangeRates,
  readMrrInputs,
} from '@tally/reports/revenue';
import type { Warehouse } from '@tally/warehouse';
import { UsageError } from './usage-error.ts';
import { withWarehouse } from './warehouse.ts';

/** The daily report of `tally report mrr --daily`, as JSON or text. */
export async function dailyMrrReport(
  warehouse: Warehouse,
  options: {
    project: string;
    from: string;
    to: string;
    currency?: string | undefined;
  },
  convertTo: string | undefined,
  money: (value: string | null) => string,
  json: boolean,
): Promise<string> {
  const { from, to } = options;
  checkDayRange(from, to);
  const currency = options.currency?.toUpperCase();
  const table = convertTo ? await rateTableFor(warehouse, convertTo) : null;
  const records = await readMrrInputs(warehouse, {
    project: options.project,
    until: utcDayEnd(to),
    currency,
  });
  const report = dailyRevenue(records, from, to, currency ? [currency] : undefined);
  const rows: Array<DailyRevenue | ConvertedDay> = table ? convertDaily(report, table) : report;
  if (json) return `${JSON.stringify(rows)}\n`;
  const header = [
    'date',
    'cur',
    'MRR',
    'ARR',
    'paying',
    'new',
    'expansion',
    'reactiv.',
    'contract.',
    'churn',
    'net new',
    'cash',
  ];
  const lines = rows.map((d) => [
    d.date,
    d.currency,
    money(d.mrr),
    money(d.arr),
    'paying_customers' in d ? String(d.paying_customers) : '—',
    money(d.new),
    money(d.expansion),
    money(d.reactivation),
    money(d.contraction),
    money(d.churn),
    money(d.net_new),
    money(d.cash_revenue),
  ]);
  return textTable(header, lines) + conversionNotes(rows, (r) => r.date);
}

/** Under a converted table: what it was converted to, the rates per period and the currencies left out. */
export function conversionNotes<T extends object>(rows: readonly T[], period: (row: T) => string): string {
  const converted = (rows as ReadonlyArray<Partial<Converted>>).find((r) => r.converted_to);
  if (!converted) return '';
  const notes = [`converted to ${converted.converted_to} with the loaded rates\n`];
  for (const row of rows) {
    const { rates: used, missing_currencies } = row as Partial<Converted>;
    const rates = (used ?? []).map((r) => `${r.currency} ${r.rate} (${r.period})`).join(', ');
    const missing = missing_currencies ?? [];
    if (rates || missing.length > 0)
      notes.push(
        `  ${period(row)}: ${rates || 'no rates'}${missing.length > 0 ? `; left out, no rate: ${missing.join(', ')}` : ''}\n`,
      );
  }
  return notes.join('');
}

function textTable(header: string[], lines: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] as string).length)));
  const format = (cells: string[]) => `${cells.map((c, i) => c.padStart(widths[i] as number)).join('  ')}\n`;
  return [format(header), ...lines.map(format)].join('');
}

/** `tally revenue rates load FILE.csv | list [--json]`. */
export async function runRates(
  config: TallyConfig,
  argv: string[],
  parseArgs: typeof ParseArgs,
): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false }, base: { type: 'string' } },
  });
  const [action, file] = positionals;
  if (action === 'load') {
    if (!file)
      throw new UsageError('tally revenue rates load <file.csv> (header: month|date,currency,rate_to_XXX)');
    // Every line is checked before anything is stored: a bad file loads nothing.
    const rates = parseExchangeRatesCsv(readFileSync(file, 'utf8'));
    await withWarehouse(config, (warehouse) => loadExchangeRates(warehouse, rates));
    const bases = [...new Set(rates.map((r) => r.base))].join(', ');
    process.stdout.write(
      `loaded ${rates.length} exchange rate${rates.length === 1 ? '' : 's'} to ${bases}\n`,
    );
    return 0;
  }
  if (action === 'list') {
    const rates = await withWarehouse(config, (warehouse) =>
      readExchangeRates(warehouse, values.base?.toUpperCase()),
    );
    if (values.json) process.stdout.write(`${JSON.stringify(rates)}\n`);
    else if (rates.length === 0)
      process.stdout.write('no exchange rates loaded (tally revenue rates load FILE.csv)\n');
    else
      for (const r of rates)
        process.stdout.write(`${r.period.padEnd(10)}  1 ${r.currency} = ${r.rate} ${r.base}\n`);
    return 0;
  }
  throw new UsageError(`unknown rates action "${action ?? ''}" (load or list)`);
}

/** `tally report mrr --convert-to XXX`: the monthly report converted, as JSON or a table with its notes. */
export async function convertedMonthlyReport(
  warehouse: Warehouse,
  report: readonly MonthlyRevenue[],
  convertTo: string,
  money: (value: string | null) => string,
  json: boolean,
): Promise<string> {
  const rows = convertMonthly(report, await rateTableFor(warehouse, convertTo));
  if (json) return `${JSON.stringify(rows)}\n`;
  const header = [
    'month',
    'cur',
    'MRR start',
    'new',
    'expansion',
    'reactiv.',
    'contract.',
    'churn',
    'MRR end',
    'net new',
    'cash',
  ];
  const lines = rows.map((m) => [
    m.month,
    m.currency,
    money(m.mrr_start),
    money(m.new),
    money(m.expansion),
    money(m.reactivation),
    money(m.contraction),
    money(m.churn),
    money(m.mrr_end),
    money(m.net_new),
    money(m.cash_revenue),
  ]);
  return textTable(header, lines) + conversionNotes(rows, (r) => r.month);
}
