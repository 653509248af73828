// The content of a scheduled report and its email: the traffic summary with the comparison to the period
// before, the top pages and sources, visitors per day (the chart), and, when the project has revenue, each
// currency's MRR and its movements over the period, read with the same functions as GET …/traffic/summary,
// …/traffic/breakdown/{page,source}, …/traffic/timeseries and …/revenue/mrr/daily (@tally/reports/queries),
// so the email's figures are the API's for the same days. Revenue days are UTC days, as in every revenue
// report (the email says so); traffic days are the project's. Every role of a member reads revenue
// (docs/design/roles.md), so every member's report has it. Rendered as a plain-text part and an HTML part
// (every value escaped) with links back to the dashboard, and the chart as an inline PNG (chart.ts).
import { formatMicros, toMicros } from '@tally/contract';
import { escapeHtml } from '@tally/mail';
import {
  revenueCurrenciesReport,
  revenueMrrDailyReport,
  type TrafficBreakdownReport,
  type TrafficSummary,
  trafficBreakdownReport,
  trafficSummaryReport,
  trafficTimeseriesReport,
} from '@tally/reports/queries';
import type { DailyRevenue } from '@tally/reports/revenue';
import type { Warehouse } from '@tally/warehouse';
import { barChartPng, CHART_HEIGHT, CHART_WIDTH } from './chart.ts';
import type { ReportPeriod } from './periods.ts';

export const REPORT_TOP_ROWS = 5;

export interface ReportContent {
  project: string;
  period: ReportPeriod;
  timeZone: string;
  summary: TrafficSummary;
  pages: TrafficBreakdownReport;
  sources: TrafficBreakdownReport;
  /** Visitors of each day of the period, oldest first. */
  daily: { date: string; visitors: number }[];
  /** Per currency of the project, largest first: MRR over the period's days (UTC). None without revenue. */
  revenue: RevenueSection[];
}

/** A currency's MRR over the report's days: at their start and end, and the movements between (exact text). */
export interface RevenueSection {
  currency: string;
  mrr_start: string;
  mrr_end: string;
  new: string;
  expansion: string;
  reactivation: string;
  contraction: string;
  churn: string;
  net_new: string;
  paying_customers: number;
}

export interface ReportEmail {
  to: string;
  subject: string;
  text: string;
  html: string;
  attachments: { filename: string; content: Uint8Array; contentType: string; cid: string }[];
}

const MOVEMENTS = ['new', 'expansion', 'reactivation', 'contraction', 'churn', 'net_new'] as const;

/** The section of a currency from its daily MRR rows over the period (as GET …/revenue/mrr/daily answers). */
export function revenueSection(currency: string, days: readonly DailyRevenue[]): RevenueSection {
  const sum = (key: (typeof MOVEMENTS)[number]) =>
    formatMicros(days.reduce((total, day) => total + toMicros(day[key]), 0n));
  const first = days[0];
  const last = days.at(-1);
  return {
    currency,
    mrr_start: first ? formatMicros(toMicros(first.mrr) - toMicros(first.net_new)) : '0',
    mrr_end: last ? last.mrr : '0',
    new: sum('new'),
    expansion: sum('expansion'),
    reactivation: sum('reactivation'),
    contraction: sum('contraction'),
    churn: sum('churn'),
    net_new: sum('net_new'),
    paying_customers: last?.paying_customers ?? 0,
  };
}

export async function reportContent(
  warehouse: Warehouse,
  project: string,
  timeZone: string,
  period: ReportPeriod,
): Promise<ReportContent> {
  const query = { project, from: period.from, to: period.to, timeZone, filters: [] };
  const [summary, pages, sources, series, currencies] = await Promise.all([
    trafficSummaryReport(warehouse, { ...query, compare: 'previous' }),
    trafficBreakdownReport(warehouse, { ...query, dimension: 'page', limit: REPORT_TOP_ROWS }),
    trafficBreakdownReport(warehouse, { ...query, dimension: 'source', limit: REPORT_TOP_ROWS }),
    trafficTimeseriesReport(warehouse, { ...query, interval: 'day' }),
    revenueCurrenciesReport(warehouse, { project }),
  ]);
  const revenue: RevenueSection[] = [];
  for (const { currency } of currencies.currencies) {
    const days = await revenueMrrDailyReport(warehouse, {
      project,
      from: period.from,
      to: period.to,
      currency,
    });
    revenue.push(revenueSection(currency, days as DailyRevenue[]));
  }
  const daily = series.points.map((p) => ({ date: p.date, visitors: p.visitors }));
  return { project, period, timeZone, summary, pages, sources, daily, revenue };
}

const MOVEMENT_LABELS: [keyof RevenueSection, string][] = [
  ['new', 'New'],
  ['expansion', 'Expansion'],
  ['reactivation', 'Reactivation'],
  ['contraction', 'Contraction'],
  ['churn', 'Churn'],
  ['net_new', 'Net new MRR'],
];

/** Exact decimal text with the currency and two decimals at least (12.5 → "12.50 EUR"). */
const money = (amount: string, currency: string): string => {
  const [whole, fraction = ''] = amount.split('.');
  return `${whole}.${fraction.padEnd(2, '0')} ${currency}`;
};

const FIGURES = [
  ['visitors', 'Unique visitors'],
  ['visits', 'Visits'],
  ['pageviews', 'Pageviews'],
  ['bounce_rate', 'Bounce rate'],
] as const;

const change = (now: number | null, before: number | null | undefined): string => {
  if (now === null || before === null || before === undefined) return '';
  if (before === 0) return now === 0 ? ' (no change)' : ' (new)';
  const pct = Math.round(((now - before) / before) * 100);
  return ` (${pct >= 0 ? '+' : ''}${pct}% on the period before)`;
};
const show = (key: (typeof FIGURES)[number][0], value: number | null): string =>
  value === null ? '–' : key === 'bounce_rate' ? `${Math.round(value * 100)}%` : String(value);

/** The chart's Content-ID: the HTML part shows the attached PNG in place (`cid:`). */
const CHART_CID = 'visitors-chart@tally';

export function renderReportEmail(content: ReportContent, to: string, dashboardUrl: string): ReportEmail {
  const { project, period, summary } = content;
  const title = `${period.kind === 'weekly' ? 'Weekly' : 'Monthly'} report for ${project}: ${period.from} to ${period.to}`;
  const link = `${dashboardUrl.replace(/\/$/, '')}/projects/${encodeURIComponent(project)}?period=custom&from=${period.from}&to=${period.to}`;
  const figures = FIGURES.map(([key, label]) => ({
    label,
    value: show(key, summary[key]),
    change: change(summary[key], summary.previous?.[key]),
  }));
  const lists = [
    ['Top pages', content.pages],
    ['Top sources', content.sources],
  ] as const;
  const revenueTitle = (r: RevenueSection) => `Revenue (${r.currency}, days in UTC)`;
  const revenueLines = (r: RevenueSection): [string, string][] => [
    ['MRR', `${money(r.mrr_end, r.currency)} (${money(r.mrr_start, r.currency)} at the start)`],
    ['Paying customers', String(r.paying_customers)],
    ...MOVEMENT_LABELS.map(([key, label]): [string, string] => [label, money(String(r[key]), r.currency)]),
  ];
  const text = [
    title,
    `(days in ${content.timeZone})`,
    '',
    ...figures.map((f) => `${f.label}: ${f.value}${f.change}`),
    ...lists.flatMap(([name, list]) => [
      '',
      `${name}:`,
      ...(list.rows.length ? list.rows.map((r) => `  ${r.value || '(none)'}: ${r.visitors}`) : ['  (none)']),
    ]),
    ...content.revenue.flatMap((r) => [
      '',
      `${revenueTitle(r)}:`,
      ...revenueLines(r).map(([label, value]) => `  ${label}: ${value}`),
    ]),
    '',
    `Open the dashboard: ${link}`,
    '',
  ].join('\n');
  const chartAlt = `Unique visitors per day, ${period.from} to ${period.to}`;
  const html = [
    `<!doctype html><html><body style="font-family:system-ui,sans-serif;color:#1f2937">`,
    `<h1 style="font-size:18px">${escapeHtml(title)}</h1>`,
    `<p style="color:#6b7280">Days in ${escapeHtml(content.timeZone)}</p>`,
    '<table>',
    ...figures.map(
      (f) =>
        `<tr><td>${escapeHtml(f.label)}</td><td style="text-align:right;font-weight:600">${escapeHtml(f.value)}</td><td style="color:#6b7280">${escapeHtml(f.change)}</td></tr>`,
    ),
    '</table>',
    `<p><img src="cid:${CHART_CID}" width="${CHART_WIDTH}" height="${CHART_HEIGHT}" alt="${escapeHtml(chartAlt)}" style="max-width:100%;height:auto"></p>`,
    ...lists.flatMap(([name, list]) => [
      `<h2 style="font-size:15px">${escapeHtml(name)}</h2>`,
      '<table>',
      ...list.rows.map(
        (r) =>
          `<tr><td>${escapeHtml(r.value || '(none)')}</td><td style="text-align:right">${r.visitors}</td></tr>`,
      ),
      '</table>',
    ]),
    ...content.revenue.flatMap((r) => [
      `<h2 style="font-size:15px">${escapeHtml(revenueTitle(r))}</h2>`,
      '<table>',
      ...revenueLines(r).map(
        ([label, value]) =>
          `<tr><td>${escapeHtml(label)}</td><td style="text-align:right">${escapeHtml(value)}</td></tr>`,
      ),
      '</table>',
    ]),
    `<p><a href="${escapeHtml(link)}">Open the dashboard</a></p>`,
    '</body></html>',
  ].join('\n');
  const chart = barChartPng(content.daily.map((d) => d.visitors));
  return {
    to,
    subject: title,
    text,
    html,
    attachments: [{ filename: 'visitors.png', content: chart, contentType: 'image/png', cid: CHART_CID }],
  };
}
