// docs/traffic.md's worked example through the whole pipeline as `npm start` runs it: sent to /api/ingest,
// landed by the real consumers, read through the dashboard's API (the address the process publishes in
// its readiness) with a read key and with a signed-in user: exactly the spec's figures. Also: the gateway
// refuses the read key, and the dashboard reads while the consumers insert.
import { FileTokenStore } from '@tally/tokens';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, tally, tempDataDir } from './support/processes.ts';
import { pipelineEnv, send, startTallyProcess, type TallyProcess } from './support/tally-process.ts';

const DAY = '2026-05-04';
const at = (time: string) => Date.parse(`${DAY}T${time}:00Z`);

describe("docs/traffic.md's worked example through npm start and the dashboard's API", () => {
  let dataDir: string;
  let running: TallyProcess;
  let dashboard: string;
  let readKey: string;
  const get = (path: string, headers: Record<string, string> = { authorization: `Bearer ${readKey}` }) =>
    fetch(`${dashboard}/api/v1/projects/worked${path}`, { headers });

  beforeAll(async () => {
    dataDir = tempDataDir();
    const store = new FileTokenStore(dataDir);
    const publicToken = (await store.create('worked', 'public')).token;
    const secretToken = (await store.create('worked', 'secret')).token;
    readKey = (await store.create('worked', 'read')).token;
    running = await startTallyProcess({ TALLY_DATA_DIR: dataDir });
    dashboard = running.endpoints.dashboardUrl as string;
    expect(dashboard).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const pageview = (visitor: string, time: string, path: string, extra: Record<string, unknown> = {}) => ({
      type: 'pageview',
      data: {
        visitor_fingerprint: visitor,
        session_id: `s_${visitor}_${time}`,
        url: `https://shop.example${path}`,
        path,
        timestamp: at(time),
        ...extra,
      },
    });
    const records = [
      pageview('v1', '10:00', '/'),
      pageview('v1', '10:10', '/pricing'),
      pageview('v1', '11:00', '/signup'),
      pageview('v2', '10:05', '/blog/a', { referrer: 'https://www.google.com/' }),
      pageview('v3', '12:00', '/pricing', {
        url: 'https://shop.example/pricing?utm_source=newsletter&utm_medium=email',
        utm_source: 'newsletter',
        utm_medium: 'email',
      }),
      {
        type: 'event',
        data: { visitor_fingerprint: 'v3', session_id: 's_v3', event_name: 'signup', timestamp: at('12:02') },
      },
      {
        type: 'identify',
        data: { visitor_fingerprint: 'v3', session_id: 's_v3', customer_id: 'C', timestamp: at('12:03') },
      },
    ];
    // In reverse order, the pageviews twice (a client's retries with the same record id).
    const ids = records.map(() => crypto.randomUUID());
    for (const [i, record] of [...records.entries()].reverse()) {
      expect((await send(running.url, publicToken, { ...record, id: ids[i] })).status).toBe(202);
    }
    for (const [i, record] of records.entries()) {
      if (record.type === 'pageview')
        expect((await send(running.url, publicToken, { ...record, id: ids[i] })).status).toBe(202);
    }
    const revenue = {
      type: 'revenue',
      data: {
        visitor_fingerprint: 'v3',
        session_id: 's_v3',
        customer_id: 'C',
        amount: 30,
        currency: 'USD',
        transaction_id: 'in_worked_1',
        event_type: 'subscription',
        mrr_impact: 30,
        is_recurring: true,
        timestamp: at('12:05'),
      },
    };
    expect((await send(running.url, secretToken, revenue)).status).toBe(202);
    // The dashboard reads while the consumers land: poll its summary until every record is in a visit.
    await eventually(30_000, 'the visits landing', async () => {
      const res = await get(`/traffic/summary?from=${DAY}&to=${DAY}`);
      const body = (await res.json()) as { pageviews: number; events: number };
      return res.status === 200 && body.pageviews === 5 && body.events === 1;
    });
  });
  afterAll(async () => {
    expect(await running?.stop('SIGTERM')).toBe(0);
  });

  it('gives pageviews 5, unique visitors 3, visits 4, bounce rate 50%', async () => {
    const res = await get(`/traffic/summary?from=${DAY}&to=${DAY}`);
    expect(await res.json()).toMatchObject({
      pageviews: 5,
      visitors: 3,
      visits: 4,
      bounce_rate: 0.5,
      events: 1,
      previous: { from: '2026-05-03', to: '2026-05-03', pageviews: 0, visits: 0 },
    });
  });

  it('gives the entry pages / 1, /signup 1, /blog/a 1, /pricing 1', async () => {
    const res = await get(`/traffic/breakdown/entry_page?from=${DAY}&to=${DAY}&sort=value`);
    const body = (await res.json()) as { rows: { value: string; visits: number }[] };
    expect(body.rows.map((r) => [r.value, r.visits])).toEqual([
      ['/', 1],
      ['/blog/a', 1],
      ['/pricing', 1],
      ['/signup', 1],
    ]);
  });

  it('gives the channels of the visits Direct 2, Organic Search 1, Email 1, also as CSV', async () => {
    const res = await get(`/traffic/breakdown/channel?from=${DAY}&to=${DAY}`);
    const body = (await res.json()) as { rows: { value: string; visits: number }[] };
    expect(body.rows.map((r) => [r.value, r.visits])).toEqual([
      ['Direct', 2],
      ['Email', 1],
      ['Organic Search', 1],
    ]);
    const csv = await (await get(`/traffic/breakdown/channel?from=${DAY}&to=${DAY}&format=csv`)).text();
    expect(csv.split('\r\n').slice(0, 2)).toEqual([
      'value,visits,visitors,pageviews,bounce_rate,visit_duration_s,share',
      'Direct,2,1,3,0.5,300,0.5',
    ]);
  });

  it('gives the new MRR of the month: 30 USD', async () => {
    const res = await get('/revenue/mrr?from=2026-05&to=2026-05');
    expect(await res.json()).toEqual([
      expect.objectContaining({ month: '2026-05', currency: 'USD', new: '30', mrr_end: '30' }),
    ]);
  });

  it('answers a user signed in through the link `tally users add` prints, and the gateway refuses the read key', async () => {
    const env = pipelineEnv({ TALLY_DATA_DIR: dataDir });
    const printed = await tally(['users', 'add', 'owner@example.com', '--project', 'worked'], env);
    const token = /set-password#token=(\S+)/.exec(printed)?.[1] as string;
    const setPassword = await fetch(`${dashboard}/api/v1/password`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: dashboard },
      body: JSON.stringify({ token, password: 'a long password' }),
    });
    expect(setPassword.status).toBe(200);
    const signIn = await fetch(`${dashboard}/api/v1/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: dashboard },
      body: JSON.stringify({ email: 'owner@example.com', password: 'a long password' }),
    });
    expect(signIn.status).toBe(200);
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const res = await get(`/traffic/summary?from=${DAY}&to=${DAY}`, { cookie });
    expect(await res.json()).toMatchObject({ pageviews: 5, visitors: 3, visits: 4 });

    const refused = await send(running.url, readKey, { type: 'pageview', data: { session_id: 's' } });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ error: 'Invalid API token' });
  });
});
