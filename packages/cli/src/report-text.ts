// How `tally report` prints a report for a terminal (without --json): plain tables, money rounded to cents,
// rates as percentages. The figures are the report's JSON body (@tally/reports/queries), only laid out.
import { divideRounded, toMicros } from '@tally/contract';
import type { TrafficBreakdownReport, TrafficSummary, TrafficTimeseriesReport } from '@tally/reports/queries';
import type { Attribution, MonthlyRevenue, Reconciliation, RevenueCohorts } from '@tally/reports/revenue';
import type { TrafficReport } from '@tally/reports/traffic';

/** A plain table: a header line, then rows; numbers right-aligned, text left-aligned. */
export function table(title: string, header: string[], rows: Array<Array<string | number>>): string {
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

export function trafficText(report: TrafficReport): string {
  return [
    `${report.project}, ${report.from} to ${report.to} (${report.time_zone})\n`,
    table(
      'Totals',
      ['pageviews', 'visitors', 'sessions', 'events', 'identified customers', 'visits'],
      [[report.pageviews, report.visitors, report.sessions, report.events, report.customers, report.visits]],
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
export function money(value: string | null): string {
  if (value === null) return '—';
  const cents = divideRounded(toMicros(value), 10_000n);
  const abs = cents < 0n ? -cents : cents;
  return `${cents < 0n ? '-' : ''}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`;
}

export function mrrTable(report: MonthlyRevenue[]): string {
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
    'LTV',
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
    money(m.ltv),
    money(m.cash_revenue),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] as string).length)));
  const format = (cells: string[]) => `${cells.map((c, i) => c.padStart(widths[i] as number)).join('  ')}\n`;
  const warnings = report.flatMap((m) =>
    m.data_warnings.map((w) => `warning: ${m.month} ${w.transaction_id} (${w.customer_id}): ${w.message}\n`),
  );
  return [format(header), ...lines.map(format), ...warnings].join('');
}

/**
 * The cohort triangle: a row per cohort and offset with its customers, MRR and the three retentions; the
 * money converted with convert_to says so in the title.
 */
export function cohortsText(report: RevenueCohorts): string {
  const rows = report.cohorts.flatMap((c) =>
    c.months.map((m) => [
      c.cohort,
      c.size,
      m.offset,
      m.customers,
      money(m.mrr),
      percent(m.logo_retention),
      percent(m.net_mrr_retention),
      percent(m.gross_mrr_retention),
    ]),
  );
  const converted = report.converted_to
    ? `, converted (missing: ${report.missing_currencies?.join(', ') || 'none'})`
    : '';
  return table(
    `Cohorts, ${report.currency}${converted}`,
    ['cohort', 'size', 'offset', 'customers', 'MRR', 'logo', 'net MRR', 'gross MRR'],
    rows,
  );
}

/** Rows of groups (attribution, breakdown) and their total as a terminal table under `title`. */
export function groupsText(report: Pick<Attribution, 'rows' | 'total'>, title: string): string {
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

export function reconciliationText(r: Reconciliation): string {
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

const figure = (value: number | null) => (value === null ? '—' : Number(value.toFixed(2)));

/** The traffic summary: the range's figures, then the comparison period's. */
export function summaryText(s: TrafficSummary): string {
  const header = [
    'period',
    'visitors',
    'visits',
    'pageviews',
    'views/visit',
    'bounce',
    'duration s',
    'events',
  ];
  const row = (name: string, f: Omit<TrafficSummary, 'time_zone' | 'current_visitors' | 'previous'>) => [
    `${name} ${f.from} to ${f.to}`,
    f.visitors,
    f.visits,
    f.pageviews,
    figure(f.views_per_visit),
    percent(f.bounce_rate),
    figure(f.visit_duration_s),
    f.events,
  ];
  return [
    `Days in ${s.time_zone}; ${s.current_visitors} current visitors\n`,
    table('Summary', header, [row('current', s), ...(s.previous ? [row('previous', s.previous)] : [])]),
  ].join('');
}

/** The time series, one line per bucket. */
export function timeseriesText(t: TrafficTimeseriesReport): string {
  return table(
    `${t.from} to ${t.to} by ${t.interval} (${t.time_zone})`,
    ['date', 'visitors', 'visits', 'pageviews', 'bounce', 'events'],
    t.points.map((p) => [p.date, p.visitors, p.visits, p.pageviews, percent(p.bounce_rate), p.events]),
  );
}

/** A traffic breakdown, one line per value. */
export function breakdownText(b: TrafficBreakdownReport): string {
  const columns = ['visitors', 'visits', 'pageviews', 'events'] as const;
  const shown = columns.filter((c) => b.rows.some((r) => r[c] !== undefined));
  return table(
    `${b.dimension}${b.property ? ` ${b.property}` : ''}, ${b.from} to ${b.to} (total ${b.total})`,
    [...shown, 'share', 'value'],
    b.rows.map((r) => [...shown.map((c) => r[c] ?? 0), percent(r.share), r.value || '(none)']),
  );
}

/** Rows of plain objects (customers, a drill-down's items, the funnel) as a table; nested values as JSON. */
export function rowsText(title: string, rows: readonly object[]): string {
  const header = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  return table(
    title,
    header,
    rows.map((r) =>
      header.map((h) => {
        const v = (r as Record<string, unknown>)[h];
        return typeof v === 'number'
          ? v
          : v === null || v === undefined
            ? ''
            : typeof v === 'string'
              ? v
              : JSON.stringify(v);
      }),
    ),
  );
}
