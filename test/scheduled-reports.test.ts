// The weekly report of a seeded project (real chDB), sent through a real SMTP server (Mailpit) and read
// back through its API: its figures are the API's for the same week in the project's time zone, and two
// schedulers on two handles of one LMDB state store (two dashboard processes' view of TALLY_DATA_DIR), each
// with its own mailer, ticking at the same instant and again later, and a restarted one, send it once.
import { loadConfig } from '@tally/config';
import { type Mailer, openMailer } from '@tally/mail';
import { LmdbStateStore, ProjectStore, ReportSubscriptions, Users } from '@tally/state-store';
import type { Warehouse } from '@tally/warehouse';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { reportScheduler } from '../services/dashboard/src/scheduled-reports/scheduler.ts';
import { startTestDashboard, type TestDashboard } from '../services/dashboard/src/test-dashboard.ts';
import { type MailpitMessage, uniqueAddress, waitForMessages } from './support/mailpit.ts';

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
    for (const s of [...schedulers, again]) await s.stop();
    for (const h of [...handles, restarted]) await h.close();
  });
});
