// The tables of `tally report mrr --daily` (or `--interval day`) and of `--convert_to XXX` of `tally report
// mrr` (their figures are @tally/reports/queries', as the dashboard's API answers them), and
// `tally revenue rates load FILE.csv | list`: the operator's exchange rates (revenue/exchange-rates.ts).
// Rates come only from the operator's file: Tally never fetches them.
import { readFileSync } from 'node:fs';
import type { parseArgs as ParseArgs } from 'node:util';
import type { TallyConfig } from '@tally/config';
import {
  type Converted,
  type ConvertedDay,
  type ConvertedMonth,
  type DailyRevenue,
  loadExchangeRates,
  parseExchangeRatesCsv,
  readExchangeRates,
} from '@tally/reports/revenue';
import { UsageError } from './usage-error.ts';
import { withWarehouse } from './warehouse.ts';

/** The daily report of `tally report mrr --daily` (revenue/mrr/daily) as a table, converted or not. */
export function dailyMrrText(
  rows: ReadonlyArray<DailyRevenue | ConvertedDay>,
  money: (value: string | null) => string,
): string {
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

/** `tally report mrr --convert_to XXX`: the converted monthly report as a table with its notes. */
export function convertedMonthlyText(
  rows: readonly ConvertedMonth[],
  money: (value: string | null) => string,
): string {
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
