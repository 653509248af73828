// The weekly report of a seeded project (real chDB), sent through a real SMTP server (Mailpit) and read
// back through its API: its figures are the API's for the same week in the project's time zone (traffic)
// and in UTC days (MRR and its movements, per currency), its chart is an inline PNG with a bar on each day
// that had visitors and none on the others, and two
// schedulers on two handles of one LMDB state store (two dashboard processes' view of TALLY_DATA_DIR), each
// with its own mailer, ticking at the same instant and again later, and a restarted one, send it once.
import { loadConfig } from '@tally/config';
import { formatMicros, toMicros } from '@tally/contract';
import { type Mailer, openMailer } from '@tally/mail';
import { LmdbStateStore, ProjectStore, ReportSubscriptions, Users } from '@tally/state-store';
import type { Warehouse } from '@tally/warehouse';
import pino from 'pino';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CHART_HEIGHT, CHART_WIDTH } from '../services/dashboard/src/scheduled-reports/chart.ts';
import { reportScheduler } from '../services/dashboard/src/scheduled-reports/scheduler.ts';
import { startTestDashboard, type TestDashboard } from '../services/dashboard/src/test-dashboard.ts';
import { attachment, type MailpitMessage, uniqueAddress, waitForMessages } from './support/mailpit.ts';

const smtp = new URL(inject('mailpitSmtpUrl'));
const mailpit = inject('mailpitUrl');
const mailers: Mailer[] = [];
const mailer = () => {
  const opened = openMailer(
    loadConfig({
      SMTP_HOST: smtp.hostname,
      SMTP_PORT: smtp.port,
      SMTP_SECURE: 'none',
      SMTP_FROM: 'Tally <reports@tally.test>',
    }),
  );
  mailers.push(opened);
  return opened;
};
const ADA = uniqueAddress('weekly-ada');
const BOB = uniqueAddress('weekly-bob');

const PROJECT = 'weekly';
let dashboard: TestDashboard;
let warehouse: Warehouse;
let sequence = 0;

async function visit(visitor: string, start: string, path: string, source: string): Promise<void> {
  sequence += 1;
  await warehouse.insert('visits', [
    {
      project_id: PROJECT,
      visitor_id: visitor,
      start,
      end: start,
      pageviews: 1,
      events: 0,
      is_bounce: true,
      duration_ms: 0,
      entry_path: path,
      exit_path: path,
      hostname: 'shop.example',
      source,
      referrer: source ? `https://${source}/` : '',
      channel: source ? 'Referral' : 'Direct',
      utm_source: '',
      utm_medium: '',
      utm_campaign: '',
      utm_term: '',
      utm_content: '',
      country: 'DE',
      browser: 'Safari',
      os: 'macOS',
      device_type: 'desktop',
      screen_size: '',
      pageview_ids: [`pv${sequence}`],
      pageview_times: [start],
      pageview_paths: [path],
      event_ids: [],
      event_times: [],
      event_names: [],
      event_data: [],
      version: sequence,
      is_deleted: 0,
    },
  ]);
}

beforeAll(async () => {
  dashboard = await startTestDashboard('weekly-report', PROJECT);
  warehouse = dashboard.warehouse;
  await new ProjectStore(dashboard.store).updateSettings(PROJECT, { time_zone: 'Europe/Berlin' });
  // The week of 16-22 November in Berlin; 23:30 UTC on Sunday the 15th is already Monday there, and 23:30
  // UTC on the 22nd is the next week's Monday.
  await visit('v1', '2026-11-15 23:30:00.000', '/pricing', 'news.example');
  await visit('v1', '2026-11-18 10:00:00.000', '/', 'news.example');
  await visit('v2', '2026-11-19 10:00:00.000', '/', '');
  await visit('v3', '2026-11-22 12:00:00.000', '/docs', 'search.example');
  await visit('v4', '2026-11-22 23:30:00.000', '/late', 'late.example');
  // The week before, for the comparison.
  await visit('v5', '2026-11-10 10:00:00.000', '/', '');
  await visit('v6', '2026-11-11 10:00:00.000', '/blog', 'news.example');
  // Revenue: EUR MRR 49 before the week, then within it (UTC days) a new 20.5, an expansion of 10 and, in
  // USD, a new 30 churned two days later.
  const revenue: [string, string, string, string | null, string][] = [
    ['A', 'subscription', '49', '49', 'EUR 2026-11-02 09:00:00'],
    ['B', 'subscription', '20.5', '20.5', 'EUR 2026-11-17 09:00:00'],
    ['A', 'upgrade', '10', '10', 'EUR 2026-11-18 09:00:00'],
    ['C', 'subscription', '30', '30', 'USD 2026-11-19 09:00:00'],
    ['C', 'churn', '0', null, 'USD 2026-11-21 09:00:00'],
    ['D', 'subscription', '99', '99', 'EUR 2026-11-23 09:00:00'], // the next week: not in this report
  ];
  await warehouse.insert(
    'revenue',
    revenue.map(([customer_id, event_type, amount, mrr_impact, at], i) => ({
      project_id: PROJECT,
      id: `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`,
      transaction_id: `t${i + 1}`,
      customer_id,
      event_type,
      amount,
      mrr_impact,
      currency: at.slice(0, 3),
      timestamp: `${at.slice(4)}.000`,
      received_at: `2026-11-23 00:00:0${i}.000`,
      is_recurring: event_type === 'subscription',
      customer_subscription_id: '',
      visitor_id: '',
      session_id: '',
      payment_processor: 'stripe',
      timestamp_clamped: false,
      metadata: {},
      payload: '{}',
      user_agent: '',
    })),
  );
  const users = new Users(dashboard.store);
  await users.add(ADA, [PROJECT]);
  await users.add(BOB, [PROJECT]);
  const subscriptions = new ReportSubscriptions(dashboard.store);
  await subscriptions.set(PROJECT, ADA.toUpperCase(), { weekly: true, monthly: false });
  await subscriptions.set(PROJECT, BOB, { weekly: false, monthly: false });
}, 60_000);

afterAll(async () => {
  for (const m of mailers) m.close();
  await dashboard?.close();
});

const api = async (path: string) => {
  const res = await dashboard.app.inject({
    url: `/api/v1/projects/${PROJECT}/traffic/${path}`,
    headers: { authorization: `Bearer ${dashboard.key}` },
  });
  expect(res.statusCode, path).toBe(200);
  return res.json();
};

describe('the weekly report', () => {
  it("has the API's figures for the week and is sent once by two dashboard processes", async () => {
    const handles = [new LmdbStateStore(dashboard.dir), new LmdbStateStore(dashboard.dir)];
    const schedulers = handles.map((store) => {
      const sender = mailer();
      return reportScheduler({
        warehouse,
        users: new Users(store),
        projects: new ProjectStore(store),
        subscriptions: new ReportSubscriptions(store),
        send: async (email) => {
          expect(await sender.send(email)).toMatchObject({ sent: true });
        },
        dashboardUrl: 'http://dashboard.test',
        logger: pino({ level: 'silent' }),
      });
    });
    // Monday 23 November 08:00 in Berlin: the week of 16-22 November is due; both processes tick at once.
    const monday = Date.parse('2026-11-23T07:00:00Z');
    const counts = await Promise.all(schedulers.map((s) => s.tick(monday)));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(1);
    expect(await Promise.all(schedulers.map((s) => s.tick(monday + 3_600_000)))).toEqual([0, 0]);
    // A restarted process (a new handle) does not send it again either.
    const restarted = new LmdbStateStore(dashboard.dir);
    const again = reportScheduler({
      warehouse,
      users: new Users(restarted),
      projects: new ProjectStore(restarted),
      subscriptions: new ReportSubscriptions(restarted),
      send: async (email) => void (await mailer().send(email)),
      dashboardUrl: 'http://dashboard.test',
      logger: pino({ level: 'silent' }),
    });
    expect(await again.tick(monday + 2 * 86_400_000)).toBe(0);
    // Every send was handed to SMTP before the ticks settled; a last message after them marks the end, so
    // a second report, had one been sent, would be there by the time the marker is.
    await mailer().send({ to: ADA, subject: 'end of test', text: 'end' });
    const arrived = await waitForMessages(mailpit, ADA, 2);
    const reports = arrived.filter((m) => m.Subject !== 'end of test');
    expect(reports.map((m) => [m.To.map((a) => a.Address), m.Subject])).toEqual([
      [[ADA], 'Weekly report for weekly: 2026-11-16 to 2026-11-22'],
    ]);
    expect(await waitForMessages(mailpit, BOB, 0)).toEqual([]);

    const summary = await api('summary?from=2026-11-16&to=2026-11-22&compare=previous');
    expect(summary).toMatchObject({ visitors: 3, visits: 4, pageviews: 4, previous: { visitors: 2 } });
    const pages = await api('breakdown/page?from=2026-11-16&to=2026-11-22&limit=5');
    const sources = await api('breakdown/source?from=2026-11-16&to=2026-11-22&limit=5');
    const email = reports[0] as MailpitMessage;
    const text = email.Text.replaceAll('\r\n', '\n');
    expect(text).toContain(`Unique visitors: ${summary.visitors} (+50% on the period before)`);
    expect(text).toContain(`Visits: ${summary.visits}`);
    expect(text).toContain(`Pageviews: ${summary.pageviews}`);
    const listed = (name: string) =>
      text
        .split(`${name}:\n`)[1]
        ?.split('\n\n')[0]
        ?.split('\n')
        .map((line) => line.trim());
    expect(listed('Top pages')).toEqual(
      pages.rows.map((r: { value: string; visitors: number }) => `${r.value || '(none)'}: ${r.visitors}`),
    );
    expect(listed('Top sources')).toEqual(
      sources.rows.map((r: { value: string; visitors: number }) => `${r.value || '(none)'}: ${r.visitors}`),
    );
    expect(pages.rows.map((r: { value: string }) => r.value).sort()).toEqual(['/', '/docs', '/pricing']);
    expect(email.HTML).toContain(
      '<a href="http://dashboard.test/projects/weekly?period=custom&#38;from=2026-11-16&#38;to=2026-11-22">',
    );

    // Revenue, per currency, in UTC days: the daily MRR API's figures for the same days.
    for (const [currency, expected] of [
      [
        'EUR',
        [
          'MRR: 79.50 EUR (49.00 EUR at the start)',
          'Paying customers: 2',
          'New: 20.50 EUR',
          'Expansion: 10.00 EUR',
          'Churn: 0.00 EUR',
          'Net new MRR: 30.50 EUR',
        ],
      ],
      [
        'USD',
        [
          'MRR: 0.00 USD (0.00 USD at the start)',
          'Paying customers: 0',
          'New: 30.00 USD',
          'Churn: 30.00 USD',
          'Net new MRR: 0.00 USD',
        ],
      ],
    ] as const) {
      const section = listed(`Revenue (${currency}, days in UTC)`);
      for (const line of expected) expect(section, currency).toContain(line);
      const res = await dashboard.app.inject({
        url: `/api/v1/projects/${PROJECT}/revenue/mrr/daily?from=2026-11-16&to=2026-11-22&currency=${currency}`,
        headers: { authorization: `Bearer ${dashboard.key}` },
      });
      const days = res.json() as Record<string, string>[];
      const sum = (key: string) => formatMicros(days.reduce((t, d) => t + toMicros(String(d[key])), 0n));
      const money = (amount: string) =>
        `${amount.includes('.') ? amount.padEnd(amount.indexOf('.') + 3, '0') : `${amount}.00`} ${currency}`;
      expect(section).toContain(
        `MRR: ${money(days.at(-1)?.mrr as string)} (${money(formatMicros(toMicros(days[0]?.mrr as string) - toMicros(days[0]?.net_new as string)))} at the start)`,
      );
      for (const [key, label] of [
        ['new', 'New'],
        ['expansion', 'Expansion'],
        ['reactivation', 'Reactivation'],
        ['contraction', 'Contraction'],
        ['churn', 'Churn'],
        ['net_new', 'Net new MRR'],
      ] as const)
        expect(section).toContain(`${label}: ${money(sum(key))}`);
    }

    // The chart: an inline PNG the HTML shows in place, a bar on each day with visitors (16, 18, 19 and 22
    // November in Berlin), none on the others.
    const [inline] = email.Inline;
    expect(inline).toMatchObject({ ContentType: 'image/png', ContentID: 'visitors-chart@tally' });
    expect(email.HTML).toContain('<img src="cid:visitors-chart@tally"');
    const png = PNG.sync.read(await attachment(mailpit, email.ID, inline?.PartID as string));
    expect([png.width, png.height]).toEqual([CHART_WIDTH, CHART_HEIGHT]);
    const slot = (CHART_WIDTH - 16) / 7;
    const barAt = (day: number) => {
      const x = Math.round(8 + (day + 0.5) * slot);
      const i = ((CHART_HEIGHT - 10) * png.width + x) * 4;
      return png.data[i] !== 255; // not the white background
    };
    expect([0, 1, 2, 3, 4, 5, 6].map(barAt)).toEqual([true, false, true, true, false, false, true]);
    for (const s of [...schedulers, again]) await s.stop();
    for (const h of [...handles, restarted]) await h.close();
  });
});
