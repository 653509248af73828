// Alert rules evaluated against a seeded project (real chDB, a real embedded record log for dead letters),
// driven by an injected clock: each kind fires once while its condition holds, over several evaluations,
// and sends one "resolved" when it ends. Deliveries go to a real HTTP server (the documented JSON body) and
// through a real SMTP server (Mailpit, read through its API); a failing webhook is retried at the next
// evaluation without holding up the email. Two evaluators on one state store (two LMDB handles on one
// directory; two Redis clients) fire an incident once, and a restarted one does not fire it again.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@tally/config';
import { openEmbeddedLog, type RecordLog } from '@tally/log';
import { testRecord } from '@tally/log/conformance';
import { type Mailer, openMailer } from '@tally/mail';
import { revenueRow } from '@tally/reports/testing';
import {
  type AlertRuleFields,
  AlertStore,
  LmdbStateStore,
  RedisStateStore,
  type StateStore,
  Users,
} from '@tally/state-store';
import type { Warehouse } from '@tally/warehouse';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { alertEvaluator } from '../services/dashboard/src/alerts/evaluator.ts';
import { startTestDashboard, type TestDashboard } from '../services/dashboard/src/test-dashboard.ts';
import { uniqueAddress, waitForMessages } from './support/mailpit.ts';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const smtp = new URL(inject('mailpitSmtpUrl'));
const mailpit = inject('mailpitUrl');

let dashboard: TestDashboard;
let warehouse: Warehouse;
let log: RecordLog;
const closers: Array<() => unknown> = [];

/** The webhook: a local server that keeps every body it was sent, answering each as `answer` says. */
interface Hook {
  url: string;
  bodies: unknown[];
  /** 200 by default; a status to answer with, or 'hang' to never answer. */
  answer: number | 'hang';
}
async function webhook(): Promise<Hook> {
  const hook: Hook = { url: '', bodies: [], answer: 200 };
  const hanging: ServerResponse[] = [];
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      expect(request.method).toBe('POST');
      expect(request.headers['content-type']).toBe('application/json');
      if (hook.answer === 'hang') {
        hanging.push(response);
        return;
      }
      if (hook.answer === 200) hook.bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      response.writeHead(hook.answer).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  hook.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        for (const r of hanging) r.destroy();
        server.close(() => resolve());
      }),
  );
  return hook;
}

const mailer = (): Mailer => {
  const opened = openMailer(
    loadConfig({
      SMTP_HOST: smtp.hostname,
      SMTP_PORT: smtp.port,
      SMTP_SECURE: 'none',
      SMTP_FROM: 'Tally <alerts@tally.test>',
    }),
  );
  closers.push(() => opened.close());
  return opened;
};

/** A state store of its own (a fresh LMDB directory), so that one test's rules are not another's. */
function freshStore(): LmdbStateStore {
  const dir = mkdtempSync(join(tmpdir(), 'tally-alerts-store-'));
  const store = new LmdbStateStore(dir);
  closers.push(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}

function evaluatorOn(
  store: StateStore,
  options: { withLog?: boolean; send?: Mailer; webhookTimeoutMs?: number } = {},
) {
  const sender = options.send ?? mailer();
  return alertEvaluator({
    warehouse,
    ...(options.withLog === false ? {} : { log }),
    users: new Users(store),
    alerts: new AlertStore(store),
    sendEmail: async (email) => {
      const result = await sender.send(email);
      if (!result.sent) throw new Error('not sent');
    },
    webhookTimeoutMs: options.webhookTimeoutMs ?? 5_000,
    dashboardUrl: 'http://dashboard.test',
    logger: pino({ level: 'silent' }),
  });
}

async function addRule(store: StateStore, project: string, fields: Partial<AlertRuleFields>) {
  return new AlertStore(store).addRule(
    project,
    { emails: [], webhook_url: null, ...fields } as AlertRuleFields,
    'owner@tally.test',
  );
}

let uuid = 0;
const nextId = () => `00000000-0000-4000-9000-${String(++uuid).padStart(12, '0')}`;
const at = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');

async function landed(project: string, type: string, receivedAt: number): Promise<void> {
  await warehouse.insert('record_ids', [
    { project_id: project, id: nextId(), type, received_at: at(receivedAt) },
  ]);
}

/** A visit of `count` pageviews at `start` (the traffic time series counts its pageview times). */
async function visit(project: string, start: number, count: number): Promise<void> {
  uuid += 1;
  const times = Array.from({ length: count }, (_, i) => at(start + i * 1000));
  await warehouse.insert('visits', [
    {
      project_id: project,
      visitor_id: `v${uuid}`,
      start: at(start),
      end: times.at(-1),
      pageviews: count,
      events: 0,
      is_bounce: count === 1,
      duration_ms: (count - 1) * 1000,
      entry_path: '/',
      exit_path: '/',
      hostname: 'shop.example',
      source: '',
      referrer: '',
      channel: 'Direct',
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
      pageview_ids: times.map((_, i) => `pv${uuid}-${i}`),
      pageview_times: times,
      pageview_paths: times.map(() => '/'),
      event_ids: [],
      event_times: [],
      event_names: [],
      event_data: [],
      version: uuid,
      is_deleted: 0,
    },
  ]);
}

beforeAll(async () => {
  dashboard = await startTestDashboard('alerts', 'alerts');
  warehouse = dashboard.warehouse;
  log = openEmbeddedLog({ path: join(dashboard.dir, 'log'), writer: true });
});

afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await log?.close();
  await dashboard?.close();
});

describe('a stalled rule', () => {
  it('fires once while no event lands, and resolves when one does, with the documented webhook body', async () => {
    const store = freshStore();
    const hook = await webhook();
    const t0 = Date.parse('2026-11-20T10:00:00Z');
    await landed('stall', 'event', t0);
    await landed('stall', 'pageview', t0 + 30 * MINUTE);
    const rule = await addRule(store, 'stall', {
      kind: 'stalled',
      record_type: 'event',
      threshold: 15,
      webhook_url: hook.url,
    });
    const evaluator = evaluatorOn(store);
    expect(await evaluator.tick(t0 + 10 * MINUTE)).toEqual({ evaluated: 1, delivered: 0, failed: 0 });
    expect(await evaluator.tick(t0 + 16 * MINUTE)).toEqual({ evaluated: 1, delivered: 1, failed: 0 });
    expect(await evaluator.tick(t0 + 20 * MINUTE)).toEqual({ evaluated: 1, delivered: 0, failed: 0 });
    const alerts = new AlertStore(store);
    expect(await alerts.state('stall', rule.id)).toMatchObject({
      status: 'firing',
      since: '2026-11-20T10:16:00.000Z',
      reason: 'no event record has landed for 20 minutes (the last was received at 2026-11-20T10:00:00.000Z)',
      pending_deliveries: 0,
    });
    await landed('stall', 'event', t0 + 21 * MINUTE);
    expect(await evaluator.tick(t0 + 22 * MINUTE)).toEqual({ evaluated: 1, delivered: 1, failed: 0 });
    expect(await evaluator.tick(t0 + 23 * MINUTE)).toEqual({ evaluated: 1, delivered: 0, failed: 0 });
    expect(await alerts.state('stall', rule.id)).toMatchObject({ status: 'ok', since: null });
    expect(await alerts.incidents('stall', rule.id)).toEqual([]); // resolved and told: nothing kept

    const [firing, resolved] = hook.bodies as Array<{ tally: { incident: { id: string } } }>;
    const incident = firing?.tally.incident.id;
    const description = 'no event record landed for 15 minutes';
    const url = 'http://dashboard.test/projects/stall/health';
    expect(hook.bodies).toEqual([
      {
        text: `[Tally] Firing: stall: ${description} (since 2026-11-20T10:16:00.000Z). no event record has landed for 16 minutes (the last was received at 2026-11-20T10:00:00.000Z). ${url}`,
        tally: {
          event: 'firing',
          project: 'stall',
          rule: { id: rule.id, kind: 'stalled', threshold: 15, description },
          incident: { id: incident, started_at: '2026-11-20T10:16:00.000Z', resolved_at: null },
          reason:
            'no event record has landed for 16 minutes (the last was received at 2026-11-20T10:00:00.000Z)',
          url,
        },
      },
      {
        text: `[Tally] Resolved: stall: ${description} (from 2026-11-20T10:16:00.000Z to 2026-11-20T10:22:00.000Z). the condition no longer holds. ${url}`,
        tally: {
          event: 'resolved',
          project: 'stall',
          rule: { id: rule.id, kind: 'stalled', threshold: 15, description },
          incident: {
            id: incident,
            started_at: '2026-11-20T10:16:00.000Z',
            resolved_at: '2026-11-20T10:22:00.000Z',
          },
          reason: 'the condition no longer holds',
          url,
        },
      },
    ]);
    expect(resolved).toBeDefined();
  });
});

describe('a dead_letters rule', () => {
  it('fires once by email over the threshold in the last hour and resolves when they age out', async () => {
    const store = freshStore();
    const ada = uniqueAddress('alert-ada');
    await new Users(store).add(ada, ['letters']);
    const t0 = Date.parse('2026-11-21T10:00:00Z');
    await log.deadLetters.add(
      [0, 1, 2].map((i) => ({
        id: `analytics:event:0:${1000 + i}`,
        group: 'analytics',
        topic: 'event',
        partition: 0,
        offset: 1000 + i,
        failed_at: t0 - (10 + i) * MINUTE,
        error: 'refused',
        error_code: 'contract',
        record: testRecord('event', { project_id: 'letters' }),
      })),
    );
    // Another project's letter is not counted.
    await log.deadLetters.add([
      {
        id: 'analytics:event:0:2000',
        group: 'analytics',
        topic: 'event',
        partition: 0,
        offset: 2000,
        failed_at: t0 - MINUTE,
        error: 'refused',
        error_code: 'contract',
        record: testRecord('event', { project_id: 'other' }),
      },
    ]);
    const rule = await addRule(store, 'letters', { kind: 'dead_letters', threshold: 2, emails: [ada] });
    const evaluator = evaluatorOn(store);
    expect(await evaluator.tick(t0)).toMatchObject({ delivered: 1, failed: 0 });
    expect(await evaluator.tick(t0 + MINUTE)).toMatchObject({ delivered: 0, failed: 0 });
    expect(await new AlertStore(store).state('letters', rule.id)).toMatchObject({
      status: 'firing',
      reason: '3 records were set aside as dead letters in the last hour (more than 2)',
    });
    // 61 minutes on, the newest of them is older than an hour.
    expect(await evaluator.tick(t0 + 61 * MINUTE)).toMatchObject({ delivered: 1, failed: 0 });
    expect(await evaluator.tick(t0 + 62 * MINUTE)).toMatchObject({ delivered: 0, failed: 0 });

    const messages = (await waitForMessages(mailpit, ada, 2)).reverse();
    expect(messages.map((m) => [m.To.map((a) => a.Address), m.Subject])).toEqual([
      [[ada], '[Tally] Firing: letters: more than 2 dead letters in an hour'],
      [[ada], '[Tally] Resolved: letters: more than 2 dead letters in an hour'],
    ]);
    const [firing, resolved] = messages;
    expect(firing?.Text.replaceAll('\r\n', '\n')).toBe(
      [
        'Firing: letters: more than 2 dead letters in an hour',
        '',
        'Firing since 2026-11-21T10:00:00.000Z.',
        '3 records were set aside as dead letters in the last hour (more than 2).',
        '',
        'Health of letters: http://dashboard.test/projects/letters/health',
        '',
      ].join('\n'),
    );
    expect(firing?.HTML).toContain(
      '<h1 style="font-size:18px">Firing: letters: more than 2 dead letters in an hour</h1>',
    );
    expect(firing?.HTML).toContain(
      '<a href="http://dashboard.test/projects/letters/health">Health of letters</a>',
    );
    expect(resolved?.Text).toContain('Resolved from 2026-11-21T10:00:00.000Z to 2026-11-21T11:01:00.000Z.');
    expect(resolved?.HTML).toContain('Resolved from 2026-11-21T10:00:00.000Z to 2026-11-21T11:01:00.000Z.');
  });

  it('cannot be evaluated without the record log, and never fires then', async () => {
    const store = freshStore();
    const hook = await webhook();
    const rule = await addRule(store, 'letters', {
      kind: 'dead_letters',
      threshold: 0,
      webhook_url: hook.url,
    });
    const evaluator = evaluatorOn(store, { withLog: false });
    expect(await evaluator.tick(Date.parse('2026-11-21T10:00:00Z'))).toMatchObject({ delivered: 0 });
    expect(await new AlertStore(store).state('letters', rule.id)).toMatchObject({
      status: 'cannot_evaluate',
      reason: 'the dashboard runs without the record log (dead letters)',
    });
    expect(hook.bodies).toEqual([]);
  });
});

describe('a traffic rule', () => {
  it('fires once on a spike, and on a drop, of the last complete hour against the week before, and resolves', async () => {
    const store = freshStore();
    const hook = await webhook();
    const hour = Date.parse('2026-11-20T13:00:00Z');
    await visit('spike', hour - 7 * DAY + 5 * MINUTE, 20); // the same hour a week before: 20
    await visit('spike', hour + 5 * MINUTE, 30);
    await visit('spike', hour + 40 * MINUTE, 20); // the hour: 50, 150% up
    // A drop: 40 then 10 pageviews, 75% down.
    await visit('drop', hour - 7 * DAY + 5 * MINUTE, 40);
    await visit('drop', hour + 5 * MINUTE, 10);
    // A small project: 1 then 3 pageviews (200% up) is under its baseline of 10, and pages nobody.
    await visit('small', hour - 7 * DAY + 5 * MINUTE, 1);
    await visit('small', hour + 5 * MINUTE, 3);
    const spike = await addRule(store, 'spike', {
      kind: 'traffic',
      direction: 'spike',
      threshold: 100,
      min_baseline: 10,
      webhook_url: hook.url,
    });
    const drop = await addRule(store, 'spike', {
      kind: 'traffic',
      direction: 'drop',
      threshold: 50,
      min_baseline: 10,
      webhook_url: hook.url,
    });
    const small = await addRule(store, 'small', {
      kind: 'traffic',
      direction: 'spike',
      threshold: 100,
      min_baseline: 10,
      webhook_url: hook.url,
    });
    const fell = await addRule(store, 'drop', {
      kind: 'traffic',
      direction: 'drop',
      threshold: 50,
      min_baseline: 10,
      webhook_url: hook.url,
    });
    const evaluator = evaluatorOn(store);
    expect(await evaluator.tick(hour + HOUR + 5 * MINUTE)).toMatchObject({ evaluated: 4, delivered: 2 });
    expect(await evaluator.tick(hour + HOUR + 30 * MINUTE)).toMatchObject({ evaluated: 4, delivered: 0 });
    const alerts = new AlertStore(store);
    expect(await alerts.state('spike', spike.id)).toMatchObject({
      status: 'firing',
      reason: '50 pageviews in the hour from 2026-11-20T13:00 UTC, 150% up on 20 the same hour a week before',
    });
    expect(await alerts.state('spike', drop.id)).toMatchObject({ status: 'ok' });
    expect(await alerts.state('drop', fell.id)).toMatchObject({
      status: 'firing',
      reason:
        '10 pageviews in the hour from 2026-11-20T13:00 UTC, 75% down on 40 the same hour a week before',
    });
    expect(await alerts.state('small', small.id)).toMatchObject({
      status: 'ok',
      reason: 'the same hour a week before had 1 pageviews, fewer than 10 to compare with',
    });
    // The next hour: nothing then nor a week before, so no comparison, and the spike is over.
    expect(await evaluator.tick(hour + 2 * HOUR + 5 * MINUTE)).toMatchObject({ delivered: 2 });
    expect(await evaluator.tick(hour + 2 * HOUR + 6 * MINUTE)).toMatchObject({ delivered: 0 });
    expect(
      hook.bodies.map((b) => (b as { tally: { event: string; rule: { id: string } } }).tally),
    ).toMatchObject([
      // Projects are evaluated in order of their names: drop, small, spike.
      { event: 'firing', rule: { id: fell.id } },
      { event: 'firing', rule: { id: spike.id } },
      { event: 'resolved', rule: { id: fell.id } },
      { event: 'resolved', rule: { id: spike.id } },
    ]);
  });
});

describe('an mrr_churn rule', () => {
  it('fires once when churn and contraction of the UTC day pass the amount, and resolves the next day', async () => {
    const store = freshStore();
    const hook = await webhook();
    await warehouse.insert('revenue', [
      revenueRow({
        project_id: 'churn',
        transaction_id: 'c1',
        customer_id: 'A',
        event_type: 'subscription',
        amount: '100',
        mrr_impact: '100',
        timestamp: '2026-11-01 09:00:00.000',
      }),
      revenueRow({
        project_id: 'churn',
        transaction_id: 'c2',
        customer_id: 'B',
        event_type: 'subscription',
        amount: '40',
        mrr_impact: '40',
        timestamp: '2026-11-01 09:00:00.000',
      }),
      revenueRow({
        project_id: 'churn',
        transaction_id: 'c3',
        customer_id: 'A',
        event_type: 'churn',
        amount: '0',
        mrr_impact: null,
        timestamp: '2026-11-22 10:00:00.000',
      }),
    ]);
    const rule = await addRule(store, 'churn', {
      kind: 'mrr_churn',
      threshold: 110.5,
      currency: null,
      webhook_url: hook.url,
    });
    const evaluator = evaluatorOn(store);
    const day = Date.parse('2026-11-22T00:00:00Z');
    // 10:30: the churn alone (100) is under 110.5.
    expect(await evaluator.tick(day + 10.5 * HOUR)).toMatchObject({ delivered: 0 });
    // B's downgrade lands at 11:00: churn 100 + contraction 25 = 125.
    await warehouse.insert('revenue', [
      revenueRow({
        project_id: 'churn',
        transaction_id: 'c4',
        customer_id: 'B',
        event_type: 'downgrade',
        amount: '15',
        mrr_impact: '-25',
        timestamp: '2026-11-22 11:00:00.000',
      }),
    ]);
    expect(await evaluator.tick(day + 12 * HOUR)).toMatchObject({ delivered: 1 });
    expect(await evaluator.tick(day + 13 * HOUR)).toMatchObject({ delivered: 0 });
    expect(await new AlertStore(store).state('churn', rule.id)).toMatchObject({
      status: 'firing',
      reason: 'MRR churned on 2026-11-22 (UTC) so far: 125 USD (churn 100, contraction 25), over 110.5',
    });
    // The next UTC day has churned nothing.
    expect(await evaluator.tick(day + DAY + 5 * MINUTE)).toMatchObject({ delivered: 1 });
    expect(await evaluator.tick(day + DAY + 6 * MINUTE)).toMatchObject({ delivered: 0 });
    expect(hook.bodies.map((b) => (b as { tally: { event: string } }).tally.event)).toEqual([
      'firing',
      'resolved',
    ]);
  });
});

describe('deliveries', () => {
  it('retry a failed webhook at the next evaluation without holding up the email', async () => {
    const store = freshStore();
    const hook = await webhook();
    const ada = uniqueAddress('alert-retry');
    await new Users(store).add(ada, ['retry']);
    const t0 = Date.parse('2026-11-20T10:00:00Z');
    await landed('retry', 'identify', t0);
    const rule = await addRule(store, 'retry', {
      kind: 'stalled',
      record_type: 'identify',
      threshold: 5,
      emails: [ada],
      webhook_url: hook.url,
    });
    const evaluator = evaluatorOn(store, { webhookTimeoutMs: 1_000 });
    hook.answer = 500;
    expect(await evaluator.tick(t0 + 10 * MINUTE)).toMatchObject({ delivered: 1, failed: 1 });
    const alerts = new AlertStore(store);
    expect(await alerts.state('retry', rule.id)).toMatchObject({
      status: 'firing',
      pending_deliveries: 1,
      last_delivery_error: 'the webhook answered 500',
    });
    hook.answer = 'hang';
    expect(await evaluator.tick(t0 + 11 * MINUTE)).toMatchObject({ delivered: 0, failed: 1 });
    expect(await alerts.state('retry', rule.id)).toMatchObject({
      last_delivery_error: 'the webhook did not answer in time',
    });
    hook.answer = 200;
    expect(await evaluator.tick(t0 + 12 * MINUTE)).toMatchObject({ delivered: 1, failed: 0 });
    expect(await alerts.state('retry', rule.id)).toMatchObject({
      pending_deliveries: 0,
      last_delivery_error: null,
    });
    expect(hook.bodies).toHaveLength(1);
    expect(await waitForMessages(mailpit, ada, 1)).toHaveLength(1);
  });
});

describe('two evaluators on one state store', () => {
  const fireOnce = async (project: string, open: () => StateStore) => {
    const hook = await webhook();
    const t0 = Date.parse('2026-11-20T10:00:00Z');
    await landed(project, 'revenue', t0);
    const [a, b] = [open(), open()] as [StateStore, StateStore];
    await addRule(a, project, {
      kind: 'stalled',
      record_type: 'revenue',
      threshold: 5,
      webhook_url: hook.url,
    });
    const evaluators = [evaluatorOn(a), evaluatorOn(b)];
    const now = t0 + 10 * MINUTE;
    const first = await Promise.all(evaluators.map((e) => e.tick(now)));
    expect(first.reduce((n, r) => n + r.delivered, 0)).toBe(1);
    const second = await Promise.all(evaluators.map((e) => e.tick(now + MINUTE)));
    expect(second.reduce((n, r) => n + r.delivered, 0)).toBe(0);
    // A restarted process (a new handle) reads the open incident and does not fire it again.
    expect(await evaluatorOn(open()).tick(now + 2 * MINUTE)).toMatchObject({ evaluated: 1, delivered: 0 });
    expect(hook.bodies.map((body) => (body as { tally: { event: string } }).tally.event)).toEqual(['firing']);
  };

  it('fire an incident once (LMDB, two handles on one directory)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tally-alerts-shared-'));
    const handles: LmdbStateStore[] = [];
    closers.push(async () => {
      for (const h of handles) await h.close();
      rmSync(dir, { recursive: true, force: true });
    });
    await fireOnce('twice-lmdb', () => {
      const handle = new LmdbStateStore(dir);
      handles.push(handle);
      return handle;
    });
  });

  it('fire an incident once (Redis, two clients)', async () => {
    const prefix = `tally-test-alerts-${randomUUID()}:`;
    const clients: Redis[] = [];
    closers.push(async () => {
      const redis = new Redis(inject('redisUrl'));
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
      for (const c of clients) c.disconnect();
    });
    await fireOnce('twice-redis', () => {
      const client = new Redis(inject('redisUrl'));
      clients.push(client);
      return new RedisStateStore(client, prefix);
    });
  });
});
