// The dashboard process (startDashboard, as `npm start` and docker-compose run it) with an SMTP server
// configured starts the report scheduler: a member who chose the weekly report gets the latest due week's
// report in Mailpit without any request (at the scheduler's first tick, 2 s after the start: the test waits
// for the message, up to 30 s), and the dashboard closes cleanly with the scheduler in it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@tally/config';
import { LmdbStateStore, ReportSubscriptions, Users } from '@tally/state-store';
import { FileTokenStore } from '@tally/tokens';
import { pino } from 'pino';
import { afterAll, expect, inject, it } from 'vitest';
import { startDashboard } from '../services/dashboard/src/runtime.ts';
import { dueReportPeriod } from '../services/dashboard/src/scheduled-reports/periods.ts';
import { uniqueAddress, waitForMessages } from './support/mailpit.ts';

const dir = mkdtempSync(join(tmpdir(), 'tally-report-process-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const smtp = new URL(inject('mailpitSmtpUrl'));

it('sends the due weekly report from a dashboard process with SMTP configured', async () => {
  const member = uniqueAddress('process-weekly');
  await new FileTokenStore(dir).create('site', 'read');
  const store = new LmdbStateStore(dir);
  await new Users(store).add(member, ['site']);
  await new ReportSubscriptions(store).set('site', member, { weekly: true, monthly: false });
  await store.close();

  const before = dueReportPeriod('weekly', 'UTC', Date.now());
  const dashboard = await startDashboard(
    loadConfig({
      TALLY_DATA_DIR: dir,
      DASHBOARD_PORT: '0',
      DASHBOARD_HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      SMTP_HOST: smtp.hostname,
      SMTP_PORT: smtp.port,
      SMTP_SECURE: 'none',
      SMTP_FROM: 'Tally <reports@tally.test>',
    }),
    { logger: pino({ level: 'silent' }) },
  );
  try {
    const [message] = await waitForMessages(inject('mailpitUrl'), member, 1, 30_000);
    const after = dueReportPeriod('weekly', 'UTC', Date.now());
    // The week due when the process ticked: the one before the test, or (across Monday 08:00) the next.
    expect([before, after].map((p) => `Weekly report for site: ${p.from} to ${p.to}`)).toContain(
      message?.Subject,
    );
  } finally {
    await dashboard.close();
  }
});
