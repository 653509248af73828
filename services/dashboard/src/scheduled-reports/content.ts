// The content of a scheduled report and its email: the traffic summary with the comparison to the period
// before, the top pages and sources, read with the same functions as GET …/traffic/summary and
// …/traffic/breakdown/{page,source} (@tally/reports/queries), so the email's figures are the API's for the
// same days. Rendered as a plain-text part and an HTML part (every value escaped) with links back to the
// dashboard.
import {
  type TrafficBreakdownReport,
  type TrafficSummary,
  trafficBreakdownReport,
  trafficSummaryReport,
} from '@tally/reports/queries';
import type { Warehouse } from '@tally/warehouse';
import type { ReportPeriod } from './periods.ts';

export const REPORT_TOP_ROWS = 5;

export interface ReportContent {
  project: string;
  period: ReportPeriod;
  timeZone: string;
  summary: TrafficSummary;
  pages: TrafficBreakdownReport;
  sources: TrafficBreakdownReport;
}

export interface ReportEmail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export async function reportContent(
  warehouse: Warehouse,
  project: string,
  timeZone: string,
  period: ReportPeriod,
): Promise<ReportContent> {
  const query = { project, from: period.from, to: period.to, timeZone, filters: [] };
  const [summary, pages, sources] = await Promise.all([
    trafficSummaryReport(warehouse, { ...query, compare: 'previous' }),
    trafficBreakdownReport(warehouse, { ...query, dimension: 'page', limit: REPORT_TOP_ROWS }),
    trafficBreakdownReport(warehouse, { ...query, dimension: 'source', limit: REPORT_TOP_ROWS }),
  ]);
  return { project, period, timeZone, summary, pages, sources };
}

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

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

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
    '',
    `Open the dashboard: ${link}`,
    '',
  ].join('\n');
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
    ...lists.flatMap(([name, list]) => [
      `<h2 style="font-size:15px">${escapeHtml(name)}</h2>`,
      '<table>',
      ...list.rows.map(
        (r) =>
          `<tr><td>${escapeHtml(r.value || '(none)')}</td><td style="text-align:right">${r.visitors}</td></tr>`,
      ),
      '</table>',
    ]),
    `<p><a href="${escapeHtml(link)}">Open the dashboard</a></p>`,
    '</body></html>',
  ].join('\n');
  return { to, subject: title, text, html };
}
