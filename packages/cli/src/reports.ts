// `tally report traffic|mrr|attribution|breakdown|reconciliation` and `tally revenue search`: the warehouse's reports
// (the daily MRR report, --convert-to and `tally revenue rates` are in revenue-rates.ts)
// for one project, as JSON (--json) or as text for a terminal. Attribution and reconciliation run the same
// functions as the dashboard's API, so both give the same figures.
import type { parseArgs as ParseArgs } from 'node:util';
import type { TallyConfig } from '@tally/config';
import { divideRounded, toMicros } from '@tally/contract';
import { addMonths, DAY_MS, monthStart, utcDayOf, utcMonthOf } from '@tally/reports/calendar';
import {
  ATTRIBUTION_DIMENSIONS,
  type Attribution,
  type AttributionDimension,
  checkMonth,
  checkMonthRange,
  checkRevenueDimension,
  currencyOf,
  filterRevenueRecords,
  type MonthlyRevenue,
  mrrReport,
  parseRevenueFilters,
  type Reconciliation,
  readCustomerAttributes,
  readCustomerTouches,
  readMrrInputs,
  readStoredMovements,
  reconcile,
  revenueAttribution,
  revenueBreakdown,
  searchRevenue,
  TOUCHES,
  type Touch,
} from '@tally/reports/revenue';
import { type TrafficReport, trafficReport } from '@tally/reports/traffic';
import type { Warehouse } from '@tally/warehouse';
import { convertedMonthlyReport, dailyMrrReport, runRates } from './revenue-rates.ts';
import { tokenStoreOf } from './tokens.ts';
import { UsageError } from './usage-error.ts';
import { withWarehouse } from './warehouse.ts';

const required = (value: string | undefined, what: string): string => {
  if (!value) throw new UsageError(`${what} is required`);
  return value;
};

/** Today (UTC) as YYYY-MM-DD, `offset` days later. */
const day = (offset = 0) => utcDayOf(Date.now() + offset * DAY_MS);
/** This month (UTC) as YYYY-MM, `offset` months later. */
const monthOf = (offset = 0) => addMonths(utcMonthOf(Date.now()), offset);

/** A project is known when it has a token or records; a report of an unknown one is refused, not empty. */
async function checkProject(
  config: TallyConfig,
  warehouse: Warehouse,
  project: string,
): Promise<'records' | 'token'> {
  const [row] = await warehouse.query<{ n: number }>(
    'SELECT count() AS n FROM (SELECT 1 FROM record_ids WHERE project_id = {project:String} LIMIT 1)',
    { project },
  );
  if ((row?.n ?? 0) > 0) return 'records';
  const tokens = tokenStoreOf(config);
  try {
    if ((await tokens.store.list()).some((t) => t.project_id === project)) return 'token';
  } finally {
    await tokens.close();
  }
  throw new Error(
    `unknown project "${project}": it has no token and no records (npx tally tokens list shows the projects)`,
  );
}

export async function runReport(
  config: TallyConfig,
  argv: string[],
  parseArgs: typeof ParseArgs,
): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      project: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      currency: { type: 'string' },
      limit: { type: 'string' },
      month: { type: 'string' },
      by: { type: 'string' },
      touch: { type: 'string' },
      filters: { type: 'string' },
      daily: { type: 'boolean', default: false },
      interval: { type: 'string' },
      'convert-to': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const [kind] = positionals;
  if (values.interval !== undefined && values.interval !== 'day' && values.interval !== 'month')
    throw new UsageError('--interval takes day or month');
  if (
    kind !== 'traffic' &&
    kind !== 'mrr' &&
    kind !== 'attribution' &&
    kind !== 'breakdown' &&
    kind !== 'reconciliation'
  )
    throw new UsageError(
      `unknown report "${kind ?? ''}" (traffic, mrr, attribution, breakdown or reconciliation)`,
    );
  const project = required(values.project, '--project <id>');
  if (kind === 'reconciliation') {
    const month = values.month ?? monthOf(0);
    checkMonth(month, '--month');
    const currency = currencyOf(values.currency);
    return withWarehouse(config, async (warehouse) => {
      await checkProject(config, warehouse, project);
      const [records, stored] = await Promise.all([
        readMrrInputs(warehouse, { project, until: monthStart(month, 1), currency }),
        readStoredMovements(warehouse, { project, month, currency }),
      ]);
      const report = reconcile(records, { month, currency, stored });
      process.stdout.write(values.json ? `${JSON.stringify(report)}\n` : reconciliationText(report));
      return report.errors.length === 0 ? 0 : 1;
    });
  }
  if (kind === 'attribution') {
    const from = values.from ?? monthOf(-11);
    const to = values.to ?? monthOf(0);
    checkMonthRange(from, to);
    const by = (values.by ?? 'channel') as AttributionDimension;
    if (!ATTRIBUTION_DIMENSIONS.includes(by))
      throw new UsageError(`--by takes ${ATTRIBUTION_DIMENSIONS.join(', ')}`);
    const touch = (values.touch ?? 'first') as Touch;
    if (!TOUCHES.includes(touch)) throw new UsageError(`--touch takes ${TOUCHES.join(' or ')}`);
    const currency = currencyOf(values.currency);
    return withWarehouse(config, async (warehouse) => {
      await checkProject(config, warehouse, project);
      const [records, touches] = await Promise.all([
        readMrrInputs(warehouse, { project, until: monthStart(to, 1), currency }),
        readCustomerTouches(warehouse, project),
      ]);
      const report = revenueAttribution(records, { from, to, currency, by, touch, touches });
      process.stdout.write(
        values.json
          ? `${JSON.stringify(report)}\n`
          : groupsText(
              report,
              `${report.from} to ${report.to}, ${report.currency}, by ${report.touch}-touch ${report.by}`,
            ),
      );
      return 0;
    });
  }
  if (kind === 'breakdown') {
    // The dashboard's …/revenue/breakdown: the same functions, so the same figures.
    const from = values.from ?? monthOf(-11);
    const to = values.to ?? monthOf(0);
    checkMonthRange(from, to);
    const by = values.by ?? 'plan';
    checkRevenueDimension(by);
    const filters = parseRevenueFilters(values.filters);
    const currency = currencyOf(values.currency);
    const until = monthStart(to, 1);
    return withWarehouse(config, async (warehouse) => {
      await checkProject(config, warehouse, project);
      const [all, attributes] = await Promise.all([
        readMrrInputs(warehouse, { project, until, currency }),
        readCustomerAttributes(warehouse, { project, dimensions: [by], until }),
      ]);
      const records = await filterRevenueRecords(warehouse, all, { project, filters, until });
      const groupValues = attributes.get(by) ?? new Map<string, string>();
      const report = revenueBreakdown(records, { from, to, currency, by, values: groupValues });
      process.stdout.write(
        values.json
          ? `${JSON.stringify(report)}\n`
          : groupsText(report, `${report.from} to ${report.to}, ${report.currency}, by ${report.by}`),
      );
      return 0;
    });
  }
  if (kind === 'mrr' && (values.daily || values.interval === 'day')) {
    // The last 30 days (today included) by default, as traffic.
    const options = {
      project,
      from: values.from ?? day(-29),
      to: values.to ?? day(),
      currency: values.currency,
    };
    return withWarehouse(config, async (warehouse) => {
      await checkProject(config, warehouse, project);
      process.stdout.write(
        await dailyMrrReport(warehouse, options, values['convert-to'], money, values.json),
      );
      return 0;
    });
  }
  // Sensible ranges: the last 30 days (today included) of traffic, the last 12 months of revenue.
  const from = values.from ?? (kind === 'traffic' ? day(-29) : monthOf(-11));
  const to = values.to ?? (kind === 'traffic' ? day() : monthOf());
  if (from > to) throw new UsageError(`--from ${from} is after --to ${to}`);
  return withWarehouse(config, async (warehouse) => {
    const known = await checkProject(config, warehouse, project);
    if (kind === 'traffic') {
      const limit = values.limit ? Number(values.limit) : undefined;
      const report = await trafficReport(warehouse, { project, from, to, limit });
      if (values.json) process.stdout.write(`${JSON.stringify(report)}\n`);
      else process.stdout.write(trafficText(report));
      if (!values.json && report.pageviews + report.events === 0) {
        process.stderr.write(
          known === 'token'
            ? `no records for ${project} yet\n`
            : `no traffic for ${project} from ${from} to ${to}\n`,
        );
      }
      return 0;
    }
    const report = await mrrReport(warehouse, { project, from, to, currency: values.currency });
    const convertTo = values['convert-to'];
    if (convertTo) {
      process.stdout.write(await convertedMonthlyReport(warehouse, report, convertTo, money, values.json));
      return 0;
    }
    process.stdout.write(values.json ? `${JSON.stringify(report)}\n` : mrrTable(report));
    const any = report.some((m) => m.mrr_end !== '0' || m.cash_revenue !== '0' || m.mrr_start !== '0');
    if (!values.json && !any) process.stderr.write(`no revenue for ${project} from ${from} to ${to}\n`);
    return 0;
  });
}

/** A plain table: a header line, then rows; numbers right-aligned, text left-aligned. */
function table(title: string, header: string[], rows: Array<Array<string | number>>): string {
  if (rows.length === 0) return `${title}: none\n`;
  const cells = rows.map((row) => row.map(String));
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? '').length)));
  const numeric = header.map((_, i) => rows.every((r) => typeof r[i] === 'number'));
  const line = (row: string[]) =>
    `  ${row
      .map((c, i) => (numeric[i] ? c.padStart(widths[i] as number) : c.padEnd(widths[i] as number)))
      .join('  ')
      .trimEnd()}\n`;
  return `${title}\n${line(header)}${cells.map(line).join('')}`;
}

function trafficText(report: TrafficReport): string {
  return [
    `${report.project}, ${report.from} to ${report.to} (UTC)\n`,
    table(
      'Totals',
      ['pageviews', 'visitors', 'sessions', 'events', 'identified customers'],
      [[report.pageviews, report.visitors, report.sessions, report.events, report.customers]],
    ),
    table(
      'Pages',
      ['pageviews', 'visitors', 'path'],
      report.paths.map((p) => [p.pageviews, p.visitors, p.path || '(none)']),
    ),
    table(
      'Sources',
      ['pageviews', 'visitors', 'source'],
      report.referrer_sources.map((r) => [r.pageviews, r.visitors, r.referrer_source || 'Direct / None']),
    ),
    table(
      'Campaigns',
      ['pageviews', 'visitors', 'utm_source', 'utm_medium', 'utm_campaign'],
      report.campaigns.map((c) => [c.pageviews, c.visitors, c.utm_source, c.utm_medium, c.utm_campaign]),
    ),
    table(
      'Events',
      ['events', 'visitors', 'name'],
      report.event_names.map((e) => [e.events, e.visitors, e.event_name]),
    ),
  ].join('\n');
}

const percent = (rate: number | null) => (rate === null ? '—' : `${(rate * 100).toFixed(2)}%`);
/** Exact decimal text rounded to cents for the table (halves away from zero), e.g. 93.33. */
function money(value: string | null): string {
  if (value === null) return '—';
  const cents = divideRounded(toMicros(value), 10_000n);
  const abs = cents < 0n ? -cents : cents;
  return `${cents < 0n ? '-' : ''}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`;
}

function mrrTable(report: MonthlyRevenue[]): string {
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
    'gross churn',
    'net churn',
    'logo churn',
    'ARPA',
    'cash',
  ];
  const lines = report.map((m) => [
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
    percent(m.gross_revenue_churn_rate),
    percent(m.net_revenue_churn_rate),
    percent(m.customer_churn_rate),
    money(m.arpa),
    money(m.cash_revenue),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] as string).length)));
  const format = (cells: string[]) => `${cells.map((c, i) => c.padStart(widths[i] as number)).join('  ')}\n`;
  const warnings = report.flatMap((m) =>
    m.data_warnings.map((w) => `warning: ${m.month} ${w.transaction_id} (${w.customer_id}): ${w.message}\n`),
  );
  return [format(header), ...lines.map(format), ...warnings].join('');
}

/** Rows of groups (attribution, breakdown) and their total as a terminal table under `title`. */
function groupsText(report: Pick<Attribution, 'rows' | 'total'>, title: string): string {
  const header = [
    'key',
    'customers',
    'paying',
    'new',
    'expansion',
    'reactiv.',
    'contract.',
    'churn',
    'MRR end',
    'cash',
  ];
  const line = (key: string, r: Attribution['total']) => [
    key,
    String(r.customers),
    String(r.paying_customers),
    money(r.new),
    money(r.expansion),
    money(r.reactivation),
    money(r.contraction),
    money(r.churn),
    money(r.mrr_end),
    money(r.cash_revenue),
  ];
  const lines = [...report.rows.map((r) => line(r.key, r)), line('total', report.total)];
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] as string).length)));
  const format = (cells: string[]) =>
    `${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join('  ')}\n`;
  return [`${title}\n`, format(header), ...lines.map(format)].join('');
}

function reconciliationText(r: Reconciliation): string {
  const b = r.bridge;
  const rows: Array<[string, string]> = [
    ['cash: recurring', money(r.cash.recurring)],
    ['cash: one-off', money(r.cash.one_off)],
    ['cash: refunds', money(r.cash.refunds)],
    ['cash: churn', money(r.cash.churn)],
    ['cash: unlabelled', money(r.cash.unlabelled)],
    ['cash: total', money(r.cash.total)],
    ['MRR start', money(b.mrr_start)],
    ['+ new', money(b.new)],
    ['+ expansion', money(b.expansion)],
    ['+ reactivation', money(b.reactivation)],
    ['- contraction', money(b.contraction)],
    ['- churn', money(b.churn)],
    ['= computed end', money(b.computed_end)],
    ['MRR end', money(b.mrr_end)],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  const amount = Math.max(...rows.map(([, v]) => v.length));
  return [
    `${r.month}, ${r.currency}\n`,
    ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v.padStart(amount)}\n`),
    b.closes ? '  the bridge closes\n' : '',
    ...r.errors.map((e) => `error: ${e}\n`),
    ...r.warnings.map(
      (w) => `warning: ${w.transaction_id} (${w.customer_id}) ${w.record_ids.join(' ')}: ${w.message}\n`,
    ),
  ].join('');
}

export async function runRevenue(
  config: TallyConfig,
  argv: string[],
  parseArgs: typeof ParseArgs,
): Promise<number> {
  if (argv[0] === 'rates') return runRates(config, argv.slice(1), parseArgs);
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      project: { type: 'string' },
      metadata: { type: 'string', multiple: true, default: [] },
      limit: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  if (positionals[0] !== 'search')
    throw new UsageError(`unknown revenue action "${positionals[0] ?? ''}" (search or rates)`);
  const metadata: Record<string, string> = {};
  for (const pair of values.metadata ?? []) {
    const eq = pair.indexOf('=');
    if (eq < 1) throw new UsageError(`--metadata takes key=value, got "${pair}"`);
    metadata[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  const project = required(values.project, '--project <id>');
  const records = await withWarehouse(config, (warehouse) =>
    searchRevenue(warehouse, {
      project,
      metadata,
      limit: values.limit ? Number(values.limit) : undefined,
    }),
  );
  if (values.json) {
    process.stdout.write(`${JSON.stringify(records)}\n`);
  } else {
    for (const r of records) {
      const d = r.data as { customer_id?: string; amount?: number; currency?: string; event_type?: string };
      process.stdout.write(
        `${r.timestamp}  ${r.transaction_id}  ${d.customer_id}  ${d.event_type ?? ''}  ${d.amount} ${d.currency ?? 'USD'}  ${JSON.stringify(r.data.metadata ?? {})}\n`,
      );
    }
    if (records.length === 0) process.stdout.write('no matching revenue records\n');
  }
  return 0;
}
