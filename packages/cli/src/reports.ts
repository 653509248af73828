// `tally report <name>` and `tally revenue search`: the reports of one project. Each report is named by the
// path of its read API operation (GET /api/v1/projects/{project}/<name>: traffic/summary,
// revenue/attribution, …) and takes that operation's query parameters as flags (--from, --filters,
// --convert_to, …); its flags are parsed into the query value of the report's one function in
// @tally/reports/queries, the function the dashboard's route calls, so `--json` prints exactly what the API
// answers. `mrr`, `cohorts`, `attribution` and `reconciliation` are short names of the revenue reports, `breakdown` of
// revenue/breakdown without its `metadata_keys` (the figures only, as it printed before), and `traffic` of
// traffic/summary (the dashboard's figures: one definition of a visit); `traffic/overview` is the terminal's
// overview (report.ts of @tally/reports/traffic), its days the project's as well. Without --json a report is a
// table (report-text.ts).
import type { parseArgs as ParseArgs } from 'node:util';
import type { TallyConfig } from '@tally/config';
import { addMonths, DAY_MS, todayIn, utcDayOf, utcMonthOf } from '@tally/reports/calendar';
import {
  revenueAttributionReport,
  revenueBreakdownReport,
  revenueCohortsReport,
  revenueCurrenciesReport,
  revenueCustomerReport,
  revenueCustomersReport,
  revenueFunnelReport,
  revenueMrrDailyReport,
  revenueMrrReport,
  revenueReconciliationReport,
  revenueRecordsReport,
  type TrafficCompare,
  trafficBreakdownReport,
  trafficSummaryReport,
  trafficTimeseriesReport,
} from '@tally/reports/queries';
import {
  ATTRIBUTION_DIMENSIONS,
  type AttributionDimension,
  type ConvertedDay,
  type ConvertedMonth,
  CUSTOMER_SORTS,
  checkDayRange,
  checkMonth,
  checkMonthRange,
  checkRevenueDimension,
  currencyOf,
  DRILLDOWN_FIGURES,
  type DrilldownFigure,
  type MonthlyRevenue,
  parseRevenueFilters,
  searchRevenue,
  TOUCHES,
  type Touch,
} from '@tally/reports/revenue';
import {
  BREAKDOWN_DIMENSIONS,
  type BreakdownDimension,
  checkRange,
  parseFilters,
  type TrafficInterval,
  trafficReport,
} from '@tally/reports/traffic';
import { openStateStore, ProjectStore } from '@tally/state-store';
import { connectRedis } from '@tally/tokens';
import type { Warehouse } from '@tally/warehouse';
import {
  breakdownText,
  cohortsText,
  groupsText,
  money,
  mrrTable,
  reconciliationText,
  rowsText,
  summaryText,
  timeseriesText,
  trafficText,
} from './report-text.ts';
import { convertedMonthlyText, dailyMrrText, runRates } from './revenue-rates.ts';
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

/** The project's time zone, as the dashboard keeps it (default UTC): its traffic days are counted in it. */
async function projectTimeZone(config: TallyConfig, project: string): Promise<string> {
  const redis = connectRedis(config);
  const store = openStateStore(config, redis);
  try {
    return (await new ProjectStore(store).settings(project)).time_zone;
  } finally {
    await store.close();
    redis?.disconnect();
  }
}

/** The flags of `tally report`: the read API's query parameter names (and --convert-to, --daily, --json). */
const OPTIONS = {
  project: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  filters: { type: 'string' },
  compare: { type: 'string' },
  interval: { type: 'string' },
  limit: { type: 'string' },
  offset: { type: 'string' },
  sort: { type: 'string' },
  order: { type: 'string' },
  property: { type: 'string' },
  search: { type: 'string' },
  status: { type: 'string' },
  currency: { type: 'string' },
  convert_to: { type: 'string' },
  'convert-to': { type: 'string' },
  by: { type: 'string' },
  touch: { type: 'string' },
  month: { type: 'string' },
  figure: { type: 'string' },
  key: { type: 'string' },
  daily: { type: 'boolean', default: false },
  json: { type: 'boolean', default: false },
} as const;
type Flags = Partial<Record<Exclude<keyof typeof OPTIONS, 'daily' | 'json'>, string>>;

/** The short names of the revenue reports. */
const SHORT_NAMES: Record<string, string> = {
  traffic: 'traffic/summary',
  mrr: 'revenue/mrr',
  attribution: 'revenue/attribution',
  cohorts: 'revenue/cohorts',
  reconciliation: 'revenue/reconciliation',
};
const REPORT_NAMES =
  'traffic (traffic/summary), traffic/overview, traffic/summary, traffic/timeseries, traffic/breakdown/<dimension>, mrr, revenue/mrr/daily, ' +
  'cohorts (revenue/cohorts), attribution, breakdown, reconciliation, revenue/records, revenue/funnel, revenue/currencies, revenue/customers, ' +
  'revenue/customers/<customer_id>';

const RANGE = ['from', 'to'] as const;
const CONVERT = ['currency', 'convert_to', 'convert-to', 'interval'] as const;
/**
 * The flags each report takes: its operation's query parameters (the API's names), no more, so that a flag
 * the API would not apply is refused rather than silently left out. `--interval` of the MRR report picks
 * the daily one.
 */
const FLAGS_OF: Record<string, readonly (keyof Flags)[]> = {
  'traffic/overview': [...RANGE, 'limit'],
  'traffic/summary': [...RANGE, 'filters', 'compare'],
  'traffic/timeseries': [...RANGE, 'filters', 'compare', 'interval'],
  'traffic/breakdown': [...RANGE, 'filters', 'limit', 'sort', 'order', 'property'],
  'revenue/mrr': [...RANGE, ...CONVERT, 'filters'],
  'revenue/mrr/daily': [...RANGE, ...CONVERT],
  'revenue/attribution': [...RANGE, 'currency', 'filters', 'by', 'touch', 'convert_to', 'convert-to'],
  'revenue/cohorts': [...RANGE, 'currency', 'filters', 'convert_to', 'convert-to'],
  'revenue/breakdown': [...RANGE, 'currency', 'filters', 'by', 'convert_to', 'convert-to'],
  breakdown: [...RANGE, 'currency', 'filters', 'by', 'convert_to', 'convert-to'],
  'revenue/reconciliation': ['month', 'currency'],
  'revenue/records': [...RANGE, 'currency', 'filters', 'by', 'touch', 'figure', 'key', 'offset', 'limit'],
  'revenue/funnel': [...RANGE, 'by', 'currency', 'convert_to', 'convert-to'],
  'revenue/currencies': [],
  'revenue/customers': [
    'currency',
    'filters',
    'offset',
    'limit',
    'search',
    'status',
    'sort',
    'order',
    'convert_to',
    'convert-to',
  ],
  'revenue/customers/<customer_id>': ['convert_to', 'convert-to'],
};

/** Refuses a flag that the report's operation does not take. */
function checkFlags(name: string, flags: Flags): void {
  const key = name.startsWith('traffic/breakdown/')
    ? 'traffic/breakdown'
    : name.startsWith('revenue/customers/')
      ? 'revenue/customers/<customer_id>'
      : name;
  const allowed = FLAGS_OF[key] ?? [];
  for (const [flag, value] of Object.entries(flags))
    if (flag !== 'project' && value !== undefined && !allowed.some((a) => a === flag))
      throw new UsageError(
        `--${flag} is not a parameter of ${key} (it takes ${allowed.map((a) => `--${a}`).join(' ') || 'none'})`,
      );
}

/** A flag's value among `allowed` (undefined when not given). */
function oneOf<T extends string>(
  value: string | undefined,
  allowed: readonly T[],
  flag: string,
): T | undefined {
  if (value !== undefined && !allowed.includes(value as T))
    throw new UsageError(`--${flag} takes ${allowed.join(', ')}`);
  return value as T | undefined;
}

/** A whole-number flag from `min` to `max` (undefined when not given). */
function integer(value: string | undefined, flag: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max)
    throw new UsageError(`--${flag} takes a whole number from ${min} to ${max}`);
  return n;
}

/** A range's ends, in order. */
function ordered(from: string, to: string): void {
  if (from > to) throw new UsageError(`--from ${from} is after --to ${to}`);
}

/** A range of months: the last 12 (UTC) by default. */
function monthRange(flags: Flags): { from: string; to: string } {
  const from = flags.from ?? monthOf(-11);
  const to = flags.to ?? monthOf(0);
  checkMonth(from, 'from');
  checkMonth(to, 'to');
  ordered(from, to);
  checkMonthRange(from, to);
  return { from, to };
}

/** A range of days in `timeZone`: the last 30 (today included) by default. */
function dayRange(flags: Flags, timeZone: string): { from: string; to: string } {
  const today = todayIn(timeZone);
  const to = flags.to ?? today;
  const from = flags.from ?? utcDayOf(Date.parse(`${to}T00:00:00Z`) - 29 * DAY_MS);
  ordered(from, to);
  checkRange(from, to);
  return { from, to };
}

/** What a report prints: its API body (--json) or a table, a note on stderr, and its exit code. */
interface Printed {
  body: unknown;
  text: () => string;
  note?: string | undefined;
  exit?: number;
}
/** A report whose flags are checked: it runs once the warehouse and the project's time zone are known. */
type Prepared = (warehouse: Warehouse, timeZone: string, known: 'records' | 'token') => Promise<Printed>;

/**
 * Checks a report's flags (before anything is opened: a mistake is exit 2) and answers how to run it, or
 * null for an unknown report; `zoned` when its days are the project's.
 */
function prepare(name: string, project: string, flags: Flags): { zoned: boolean; run: Prepared } | null {
  const trafficFilters = () => parseFilters(flags.filters);
  const revenueFilters = () => parseRevenueFilters(flags.filters);
  const compare = () => oneOf<TrafficCompare>(flags.compare, ['previous', 'year', 'none'], 'compare');
  const by = () => oneOf<AttributionDimension>(flags.by, ATTRIBUTION_DIMENSIONS, 'by');
  const touch = () => oneOf<Touch>(flags.touch, TOUCHES, 'touch');
  const convertTo = flags.convert_to ?? flags['convert-to'];
  /** The query of a report of months of revenue (mrr, cohorts), its flags checked before anything opens. */
  const monthsQuery = () => {
    const range = monthRange(flags);
    const filters = revenueFilters();
    if (flags.currency !== undefined) currencyOf(flags.currency);
    if (convertTo !== undefined) currencyOf(convertTo);
    return { project, ...range, currency: flags.currency, filters, convert_to: convertTo };
  };
  /**
   * The currency and convert_to of a report of a period (attribution, breakdown): with --convert-to, every
   * currency unless --currency names one; without, --currency (default USD).
   */
  const periodCurrency = () => {
    if (convertTo === undefined) return { currency: currencyOf(flags.currency) };
    currencyOf(convertTo);
    return {
      currency: flags.currency === undefined ? undefined : currencyOf(flags.currency),
      convert_to: convertTo,
    };
  };
  /** The title's currency: converted ones say so, with what they left out. */
  const currencyTitle = (body: { currency: string; converted_to?: string; missing_currencies?: string[] }) =>
    body.converted_to === undefined
      ? body.currency
      : `converted to ${body.converted_to}${body.missing_currencies?.length ? ` (no rate: ${body.missing_currencies.join(', ')})` : ''}`;
  if (flags.from && flags.to) ordered(flags.from, flags.to);
  if (name.startsWith('traffic/breakdown/')) {
    const dimension = oneOf<BreakdownDimension>(
      name.slice('traffic/breakdown/'.length),
      BREAKDOWN_DIMENSIONS,
      'dimension of traffic/breakdown/<dimension>',
    ) as BreakdownDimension;
    const filters = trafficFilters();
    const limit = integer(flags.limit, 'limit', 1, 10_000);
    const order = oneOf(flags.order, ['asc', 'desc'] as const, 'order');
    return {
      zoned: true,
      run: async (warehouse, timeZone) => {
        const body = await trafficBreakdownReport(warehouse, {
          project,
          ...dayRange(flags, timeZone),
          timeZone,
          filters,
          dimension,
          property: flags.property,
          limit,
          sort: flags.sort,
          order,
        });
        return { body, text: () => breakdownText(body) };
      },
    };
  }
  if (name.startsWith('revenue/customers/')) {
    const customer = name.slice('revenue/customers/'.length);
    if (!customer) throw new UsageError('revenue/customers/<customer_id> needs a customer id');
    if (convertTo !== undefined) currencyOf(convertTo);
    return {
      zoned: false,
      run: async (warehouse) => {
        const body = await revenueCustomerReport(warehouse, {
          project,
          customer_id: customer,
          convert_to: convertTo,
        });
        if (!body) throw new Error(`no customer "${customer}" in ${project}`);
        return { body, text: () => `${JSON.stringify(body, null, 2)}\n` };
      },
    };
  }
  switch (name) {
    case 'traffic/overview': {
      const limit = integer(flags.limit, 'limit', 1, 10_000);
      return {
        zoned: true,
        run: async (warehouse, timeZone, known) => {
          const { from, to } = dayRange(flags, timeZone);
          const body = await trafficReport(warehouse, { project, from, to, limit, timeZone });
          const quiet = body.pageviews + body.events === 0;
          const note =
            known === 'token'
              ? `no records for ${project} yet\n`
              : `no traffic for ${project} from ${from} to ${to}\n`;
          return { body, text: () => trafficText(body), note: quiet ? note : undefined };
        },
      };
    }
    case 'traffic/summary': {
      const filters = trafficFilters();
      const comparison = compare();
      return {
        zoned: true,
        run: async (warehouse, timeZone) => {
          const query = { project, ...dayRange(flags, timeZone), timeZone, filters, compare: comparison };
          const body = await trafficSummaryReport(warehouse, query);
          return { body, text: () => summaryText(body) };
        },
      };
    }
    case 'traffic/timeseries': {
      const filters = trafficFilters();
      const comparison = compare();
      const interval = oneOf<TrafficInterval>(flags.interval, ['hour', 'day', 'week', 'month'], 'interval');
      return {
        zoned: true,
        run: async (warehouse, timeZone) => {
          const range = dayRange(flags, timeZone);
          const query = { project, ...range, timeZone, filters, compare: comparison, interval };
          const body = await trafficTimeseriesReport(warehouse, query);
          return { body, text: () => timeseriesText(body) };
        },
      };
    }
    case 'revenue/mrr': {
      const query = monthsQuery();
      return {
        zoned: false,
        run: async (warehouse) => {
          const body = await revenueMrrReport(warehouse, query);
          if (convertTo) return { body, text: () => convertedMonthlyText(body as ConvertedMonth[], money) };
          const months = body as MonthlyRevenue[];
          const any = months.some((m) => m.mrr_end !== '0' || m.cash_revenue !== '0' || m.mrr_start !== '0');
          const note = any ? undefined : `no revenue for ${project} from ${query.from} to ${query.to}\n`;
          return { body, text: () => mrrTable(months), note };
        },
      };
    }
    case 'revenue/mrr/daily': {
      const range = { from: flags.from ?? day(-29), to: flags.to ?? day() };
      ordered(range.from, range.to);
      checkDayRange(range.from, range.to);
      if (flags.currency !== undefined) currencyOf(flags.currency);
      if (convertTo !== undefined) currencyOf(convertTo);
      return {
        zoned: false,
        run: async (warehouse) => {
          const query = { project, ...range, currency: flags.currency, convert_to: convertTo };
          const body = await revenueMrrDailyReport(warehouse, query);
          return { body, text: () => dailyMrrText(body as ConvertedDay[], money) };
        },
      };
    }
    case 'revenue/attribution': {
      const range = monthRange(flags);
      const query = {
        project,
        ...range,
        ...periodCurrency(),
        filters: revenueFilters(),
        by: by(),
        touch: touch(),
      };
      return {
        zoned: false,
        run: async (warehouse) => {
          const body = await revenueAttributionReport(warehouse, query);
          const title = `${body.from} to ${body.to}, ${currencyTitle(body)}, by ${body.touch}-touch ${body.by}`;
          return { body, text: () => groupsText(body, title) };
        },
      };
    }
    case 'revenue/breakdown':
    case 'breakdown': {
      const range = monthRange(flags);
      const dimension = flags.by ?? 'plan';
      checkRevenueDimension(dimension);
      const query = {
        project,
        ...range,
        ...periodCurrency(),
        filters: revenueFilters(),
        by: dimension,
      };
      return {
        zoned: false,
        run: async (warehouse) => {
          const answer = await revenueBreakdownReport(warehouse, query);
          // The short name prints the figures only, as it did before the API listed the metadata keys.
          const { metadata_keys: _keys, ...figures } = answer;
          const body = name === 'breakdown' ? figures : answer;
          const title = `${body.from} to ${body.to}, ${currencyTitle(body)}, by ${body.by}`;
          return { body, text: () => groupsText(body, title) };
        },
      };
    }
    case 'revenue/cohorts': {
      const query = monthsQuery();
      return {
        zoned: false,
        run: async (warehouse) => {
          const body = await revenueCohortsReport(warehouse, query);
          return { body, text: () => cohortsText(body) };
        },
      };
    }
    case 'revenue/reconciliation': {
      const month = flags.month ?? monthOf(0);
      checkMonth(month, '--month');
      const query = { project, month, currency: currencyOf(flags.currency) };
      return {
        zoned: false,
        run: async (warehouse) => {
          const body = await revenueReconciliationReport(warehouse, query);
          return { body, text: () => reconciliationText(body), exit: body.errors.length === 0 ? 0 : 1 };
        },
      };
    }
    case 'revenue/records': {
      const range = monthRange(flags);
      const figure = oneOf<DrilldownFigure>(
        required(flags.figure, '--figure'),
        DRILLDOWN_FIGURES,
        'figure',
      ) as DrilldownFigure;
      const query = {
        project,
        ...range,
        currency: currencyOf(flags.currency),
        filters: revenueFilters(),
        by: by(),
        touch: touch(),
        figure,
        key: flags.key,
        offset: integer(flags.offset, 'offset', 0, 10_000_000),
        limit: integer(flags.limit, 'limit', 1, 10_000),
      };
      return {
        zoned: false,
        run: async (warehouse) => {
          const body = await revenueRecordsReport(warehouse, query);
          const title = `${body.figure} ${body.from} to ${body.to}, ${body.currency}: ${body.total} (${body.count} items)`;
          return { body, text: () => rowsText(title, body.items) };
        },
      };
    }
    case 'revenue/currencies':
      return {
        zoned: false,
        run: async (warehouse) => {
          const body = await revenueCurrenciesReport(warehouse, { project });
          const text = () =>
            body.currencies.length === 0
              ? `no revenue for ${project}\n`
              : `${['currency  records  customers', ...body.currencies.map((c) => `${c.currency.padEnd(8)}  ${String(c.records).padStart(7)}  ${String(c.customers).padStart(9)}`)].join('\n')}\n`;
          return { body, text };
        },
      };
    case 'revenue/funnel': {
      const dimension = by();
      const currency = periodCurrency();
      return {
        zoned: true,
        run: async (warehouse, timeZone) => {
          const range = dayRange(flags, timeZone);
          const query = { project, ...range, timeZone, by: dimension, ...currency };
          const body = await revenueFunnelReport(warehouse, query);
          return {
            body,
            text: () => rowsText(`${range.from} to ${range.to}, ${currencyTitle(body)}`, body.rows),
          };
        },
      };
    }
    case 'revenue/customers': {
      const query = {
        project,
        ...periodCurrency(),
        filters: revenueFilters(),
        offset: integer(flags.offset, 'offset', 0, 10_000_000),
        limit: integer(flags.limit, 'limit', 1, 1000),
        search: flags.search,
        status: oneOf(flags.status, ['active', 'churned', 'one_off'] as const, 'status'),
        sort: oneOf(flags.sort, CUSTOMER_SORTS, 'sort'),
        order: oneOf(flags.order, ['asc', 'desc'] as const, 'order'),
      };
      return {
        zoned: false,
        run: async (warehouse) => {
          const body = await revenueCustomersReport(warehouse, query);
          const title = `${body.total} customers (${currencyTitle(body)}), from ${body.offset + 1}`;
          return { body, text: () => rowsText(title, body.customers) };
        },
      };
    }
    default:
      return null;
  }
}

export async function runReport(
  config: TallyConfig,
  argv: string[],
  parseArgs: typeof ParseArgs,
): Promise<number> {
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
  const [given = ''] = positionals;
  const { daily, json, ...flags } = values;
  let name = SHORT_NAMES[given] ?? given;
  if (name === 'revenue/mrr') {
    if (flags.interval !== undefined && flags.interval !== 'day' && flags.interval !== 'month')
      throw new UsageError('--interval takes day or month');
    if (daily || flags.interval === 'day') name = 'revenue/mrr/daily';
  }
  const known = [
    'traffic/overview',
    'traffic/summary',
    'traffic/timeseries',
    'revenue/mrr',
    'revenue/mrr/daily',
    'revenue/attribution',
    'revenue/cohorts',
    'revenue/breakdown',
    'breakdown',
    'revenue/reconciliation',
    'revenue/records',
    'revenue/funnel',
    'revenue/currencies',
    'revenue/customers',
  ];
  if (
    !known.includes(name) &&
    !name.startsWith('traffic/breakdown/') &&
    !name.startsWith('revenue/customers/')
  )
    throw new UsageError(`unknown report "${given}" (${REPORT_NAMES})`);
  const project = required(flags.project, '--project <id>');
  checkFlags(name, flags);
  const report = prepare(name, project, flags) as NonNullable<ReturnType<typeof prepare>>;
  return withWarehouse(config, async (warehouse) => {
    const found = await checkProject(config, warehouse, project);
    const timeZone = report.zoned ? await projectTimeZone(config, project) : 'UTC';
    const printed = await report.run(warehouse, timeZone, found);
    process.stdout.write(json ? `${JSON.stringify(printed.body)}\n` : printed.text());
    if (!json && printed.note) process.stderr.write(printed.note);
    return printed.exit ?? 0;
  });
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
