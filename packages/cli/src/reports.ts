// `tally report traffic|mrr` and `tally revenue search`: the warehouse's reports for one project, as
// JSON (--json) or as text for a terminal.
import type { parseArgs as ParseArgs } from 'node:util';
import type { TallyConfig } from '@tally/config';
import { divideRounded, toMicros } from '@tally/contract';
import { type MonthlyRevenue, mrrReport, searchRevenue, trafficReport } from '@tally/warehouse';
import { withWarehouse } from './warehouse.ts';

const required = (value: string | undefined, what: string): string => {
  if (!value) throw new Error(`${what} is required`);
  return value;
};

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
      json: { type: 'boolean', default: false },
    },
  });
  const [kind] = positionals;
  const project = required(values.project, '--project <id>');
  if (kind === 'traffic') {
    const report = await withWarehouse(config, (warehouse) =>
      trafficReport(warehouse, {
        project,
        from: required(values.from, '--from YYYY-MM-DD'),
        to: required(values.to, '--to YYYY-MM-DD'),
        limit: values.limit ? Number(values.limit) : undefined,
      }),
    );
    if (values.json) {
      process.stdout.write(`${JSON.stringify(report)}\n`);
    } else {
      process.stdout.write(
        `${project} ${report.from} … ${report.to}: ${report.pageviews} pageviews, ${report.visitors} visitors, ` +
          `${report.sessions} sessions, ${report.events} events, ${report.customers} identified customers\n`,
      );
      for (const p of report.paths) process.stdout.write(`  ${String(p.pageviews).padStart(8)}  ${p.path}\n`);
    }
    return 0;
  }
  if (kind === 'mrr') {
    const report = await withWarehouse(config, (warehouse) =>
      mrrReport(warehouse, {
        project,
        from: required(values.from, '--from YYYY-MM'),
        to: required(values.to, '--to YYYY-MM'),
        currency: values.currency,
      }),
    );
    process.stdout.write(values.json ? `${JSON.stringify(report)}\n` : mrrTable(report));
    return 0;
  }
  throw new Error(`unknown report "${kind ?? ''}" (traffic or mrr)`);
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

export async function runRevenue(
  config: TallyConfig,
  argv: string[],
  parseArgs: typeof ParseArgs,
): Promise<number> {
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
    throw new Error(`unknown revenue action "${positionals[0] ?? ''}" (search)`);
  const metadata: Record<string, string> = {};
  for (const pair of values.metadata ?? []) {
    const eq = pair.indexOf('=');
    if (eq < 1) throw new Error(`--metadata takes key=value, got "${pair}"`);
    metadata[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  const records = await withWarehouse(config, (warehouse) =>
    searchRevenue(warehouse, {
      project: required(values.project, '--project <id>'),
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
