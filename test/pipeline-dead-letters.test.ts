// No record can stop the pipeline, through the whole of it as `npm start` runs it, on the embedded log and
// on Kafka: the hostile records of the probe are refused by the gateway (400) because the contract bounds
// them; records that reach the log anyway (written by an older gateway or another producer, or refused by
// the warehouse itself) are set aside as dead letters while the records around them land once, and can be
// replayed once the warehouse is mended; money stays exact near its bounds; a record id is stored once
// whatever day its copies are dated; and no log line of any of it holds a record's values.
import { randomUUID } from 'node:crypto';
import { loadConfig } from '@tally/config';
import { type IngestRecord, toMicros } from '@tally/contract';
import { openEmbeddedLog, openRecordLog, topicName } from '@tally/log';
import { anIngestRecord, type RecordOverrides } from '@tally/log/testing';
import { FileTokenStore } from '@tally/tokens';
import type { Warehouse } from '@tally/warehouse';
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, tally, tempDataDir } from './support/processes.ts';
import {
  BROWSER,
  pipelineBackends,
  pipelineEnv,
  publishedWarehouse,
  send,
  startTallyProcess,
  type TallyProcess,
} from './support/tally-process.ts';

/** In every record this file sends: no log line may ever show it. */
const MARKER = 'PAYLOAD-MARKER-7f3a';
const PROJECT = 'hostile';
const DAY = Date.UTC(2026, 4, 4, 12);

const backends = pipelineBackends({ partitions: 1 });

/** A record as a gateway appends it, with whatever values an older gateway let through. */
const logRecord = (
  type: IngestRecord['type'],
  data: Record<string, unknown>,
  overrides: RecordOverrides<IngestRecord['type']> = {},
) => anIngestRecord(type, { project_id: PROJECT, user_agent: BROWSER, ...overrides, data });

const revenueData = (customer: string, extra: Record<string, unknown> = {}) => ({
  visitor_fingerprint: `v-${MARKER}`,
  session_id: `s-${MARKER}`,
  customer_id: customer,
  amount: 10,
  currency: 'USD',
  transaction_id: `tx-${randomUUID()}-${MARKER}`,
  ...extra,
});

describe.each(backends)('records that cannot land, through npm start on %s', (name, backendEnv) => {
  let dataDir: string;
  let env: Record<string, string>;
  let running: TallyProcess;
  let warehouse: Warehouse;
  let publicToken: string;
  let secretToken: string;
  /** Records written straight into the log before the process started: ids of the good and the bad. */
  const before = { good: [] as string[], bad: [] as string[] };

  beforeAll(async () => {
    dataDir = tempDataDir();
    env = pipelineEnv({ TALLY_DATA_DIR: dataDir, LOG_LEVEL: 'debug', ...backendEnv() });
    const store = new FileTokenStore(dataDir);
    publicToken = (await store.create(PROJECT, 'public')).token;
    secretToken = (await store.create(PROJECT, 'secret')).token;
    await store.close();

    // What an older gateway accepted with a 202: a timestamp past what the warehouse holds (the probe's
    // 1e21 on the embedded log; Avro's long takes at most ~9.2e18), amount 1e25, and twelve records of
    // one customer with mrr_impact 9e19 each. Good records before and after them.
    const hugeTime = name === 'Kafka' ? 5e15 : 1e21;
    const good = (n: number) =>
      logRecord('pageview', {
        session_id: `good${n}-${MARKER}`,
        visitor_fingerprint: 'v',
        path: `/before-${n}`,
      });
    const bad = [
      logRecord(
        'pageview',
        { session_id: `bad-${MARKER}`, visitor_fingerprint: 'v', timestamp: hugeTime },
        { timestamp: hugeTime, client_timestamp: hugeTime },
      ),
      logRecord('revenue', revenueData(`big-${MARKER}`, { amount: 1e25 })),
      ...Array.from({ length: 12 }, () =>
        logRecord('revenue', revenueData(`huge-mrr-${MARKER}`, { event_type: 'upgrade', mrr_impact: 9e19 })),
      ),
    ];
    const records = [good(1), ...bad, good(2)];
    before.good.push(records[0]?.id as string, records.at(-1)?.id as string);
    before.bad.push(...bad.map((r) => r.id));
    const config = loadConfig(env);
    const log =
      name === 'Kafka'
        ? await openRecordLog(config)
        : openEmbeddedLog({ path: `${dataDir}/log`, writer: true });
    await log.append(records);
    await log.close();
    if (name === 'Kafka') {
      // And bytes that are no record at all, on the pageview topic.
      const kafka = new kafkajs.Kafka({
        brokers: [config.KAFKA_BROKERS as string],
        logLevel: kafkajs.logLevel.NOTHING,
      });
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({
        topic: topicName(config.KAFKA_TOPIC_PREFIX, 'pageview'),
        messages: [{ key: 'x', value: Buffer.from(`not avro ${MARKER}`) }],
      });
      await producer.disconnect();
    }

    running = await startTallyProcess(env);
    warehouse = await publishedWarehouse(dataDir);
  });
  afterAll(async () => {
    await warehouse?.close();
    expect(await running?.stop('SIGTERM')).toBe(0);
  });

  const countById = async (table: string, id: string) =>
    (
      await warehouse.query<{ n: number }>(`SELECT count() AS n FROM ${table} FINAL WHERE id = {id:String}`, {
        id,
      })
    )[0]?.n ?? 0;
  const landed = (table: string, id: string) =>
    eventually(30_000, `record ${id} landing in ${table}`, async () => (await countById(table, id)) === 1);
  const deadLetters = async () =>
    JSON.parse(await tally(['dead-letters', 'list', '--json'], env)) as Array<{
      id: string;
      error_code: string;
      error: string;
      topic: string;
    }>;

  it('sets aside the records in the log that it cannot store, lands those around them once, and goes on', async () => {
    for (const id of before.good) await landed('events', id);
    let letters: Awaited<ReturnType<typeof deadLetters>> = [];
    const expected = before.bad.length + (name === 'Kafka' ? 1 : 0);
    await eventually(60_000, 'the bad records in the dead-letter store', async () => {
      letters = await deadLetters();
      return letters.length >= expected;
    });
    expect(letters).toHaveLength(expected);
    expect(letters.filter((l) => l.error_code === 'contract')).toHaveLength(before.bad.length);
    if (name === 'Kafka') expect(letters.filter((l) => l.error_code === 'undecodable')).toHaveLength(1);
    // None of them reached a table; the bad customer's MRR was never counted.
    for (const id of before.bad) expect(await countById('events', id)).toBe(0);
    const [revenue] = await warehouse.query<{ n: number }>(
      "SELECT count() AS n FROM revenue FINAL WHERE project_id = 'hostile'",
    );
    expect(revenue?.n).toBe(0);

    // `show` gives the record and why; the process is ready, counts them, and keeps landing.
    const bigAmount = letters.find((l) => l.error.includes('amount'));
    const shown = JSON.parse(await tally(['dead-letters', 'show', bigAmount?.id as string, '--json'], env));
    expect(shown).toMatchObject({ group: 'revenue', topic: 'revenue', error_code: 'contract' });
    expect(shown.record.data.amount).toBe(1e25);
    expect((await fetch(`${running.adminUrl}/readyz`)).status).toBe(200);
    const metrics = await (await fetch(`${running.adminUrl}/metrics`)).text();
    expect(metrics).toMatch(/tally_dead_letters_total\{group="revenue",type="revenue",code="contract"\} 13/);
    const after = randomUUID();
    const res = await send(running.url, publicToken, {
      type: 'pageview',
      id: after,
      data: { session_id: `after-${MARKER}`, path: '/after' },
    });
    expect(res.status).toBe(202);
    await landed('events', after);
  });

  it("refuses at the gateway, with 400 and the field's path, each value of the probe it could not store exactly", async () => {
    const first = randomUUID();
    const last = randomUUID();
    const page = (data: Record<string, unknown>, id = randomUUID()) =>
      send(running.url, publicToken, { type: 'pageview', id, data: { session_id: `s-${MARKER}`, ...data } });
    const revenue = (data: Record<string, unknown>) =>
      send(running.url, secretToken, { type: 'revenue', data: revenueData(`c-${MARKER}`, data) });
    expect((await page({ path: '/first' }, first)).status).toBe(202);
    const refused = [
      [
        await page({ timestamp: 1e21 }),
        /^data\.timestamp must be milliseconds since the Unix epoch before the year 2100/,
      ],
      [await page({ title: `lone \ud800 ${MARKER}` }), /^data\.title must be valid Unicode text/],
      [await revenue({ amount: 1e25 }), /^data\.amount must be between/],
      [await revenue({ amount: 0.0000004 }), /^data\.amount must have at most 6 decimal places/],
      [await revenue({ mrr_impact: 9e19, event_type: 'upgrade' }), /^data\.mrr_impact must be between/],
      [await revenue({ mrr_impact: 1e25, event_type: 'upgrade' }), /^data\.mrr_impact must be between/],
    ] as const;
    for (const [res, message] of refused) {
      expect(res.status).toBe(400);
      const body = (await res.json()) as { message: string };
      expect(body.message).toMatch(message);
      expect(body.message).not.toContain(MARKER);
    }
    expect((await page({ path: '/last' }, last)).status).toBe(202);
    await landed('events', first);
    await landed('events', last);
  });

  it('splits a batch the warehouse refuses down to the record at fault, and replays it once the warehouse is mended', async () => {
    await tally(['sql', "ALTER TABLE events ADD CONSTRAINT no_blocked CHECK path != '/blocked'"], env);
    const ids = { ok1: randomUUID(), blocked: randomUUID(), ok2: randomUUID() };
    const sent = await Promise.all(
      Object.entries(ids).map(([path, id]) =>
        send(running.url, publicToken, {
          type: 'pageview',
          id,
          data: { session_id: `split-${MARKER}`, path: `/${path}` },
        }),
      ),
    );
    expect(sent.map((r) => r.status)).toEqual([202, 202, 202]);
    await landed('events', ids.ok1);
    await landed('events', ids.ok2);
    let letter: { id: string; error_code: string } | undefined;
    await eventually(30_000, 'the refused record set aside', async () => {
      letter = (await deadLetters()).find((l) => l.error_code === 'warehouse-469');
      return letter !== undefined;
    });
    expect(await countById('events', ids.blocked)).toBe(0);

    await tally(['sql', 'ALTER TABLE events DROP CONSTRAINT no_blocked'], env);
    const replay = await tally(['dead-letters', 'replay', letter?.id as string], env);
    expect(replay).toMatch(/Replayed|Asked the running gateway to replay/);
    await landed('events', ids.blocked);
    expect((await deadLetters()).map((l) => l.id)).not.toContain(letter?.id);
    for (const id of Object.values(ids)) expect(await countById('events', id)).toBe(1);
  });

  it('keeps MRR exact near the bounds: the bridge closes to the micro-unit in the report and in mrr_monthly', async () => {
    const customer = `near-bounds-${MARKER}`;
    const at = (day: number) => Date.UTC(2026, 0, day, 12);
    for (let i = 1; i <= 12; i++) {
      const res = await send(running.url, secretToken, {
        type: 'revenue',
        data: revenueData(customer, {
          event_type: 'subscription',
          customer_subscription_id: `sub-${i}`,
          amount: 999_999_999_999_999,
          mrr_impact: 999_999_999_999_999,
          timestamp: at(i),
        }),
      });
      expect(res.status).toBe(202);
    }
    const upgrade = await send(running.url, secretToken, {
      type: 'revenue',
      data: revenueData(customer, {
        event_type: 'upgrade',
        amount: 49,
        mrr_impact: 49,
        timestamp: Date.UTC(2026, 1, 2),
      }),
    });
    expect(upgrade.status).toBe(202);
    await eventually(30_000, 'the thirteen records and their movements', async () => {
      const [row] = await warehouse.query<{ n: number }>(
        "SELECT count() AS n FROM mrr_movements_current WHERE project_id = 'hostile' AND customer_id = {c:String}",
        { c: customer },
      );
      return row?.n === 13;
    });
    const report = JSON.parse(
      await tally(
        ['report', 'mrr', '--project', PROJECT, '--from', '2026-01', '--to', '2026-02', '--json'],
        env,
      ),
    ) as Array<Record<string, string>>;
    const [january, february] = report;
    expect(january).toMatchObject({
      new: '999999999999999',
      expansion: '10999999999999989',
      mrr_end: '11999999999999988',
    });
    expect(february).toMatchObject({ expansion: '49', mrr_end: '12000000000000037', net_new: '49' });
    const micros = (text: string | undefined) => toMicros(text ?? '0');
    for (const month of report) {
      const moved =
        micros(month.new) +
        micros(month.expansion) +
        micros(month.reactivation) -
        micros(month.contraction) -
        micros(month.churn);
      expect(moved).toBe(micros(month.mrr_end) - micros(month.mrr_start));
    }
    const monthly = await warehouse.query<Record<string, string>>(
      `SELECT toString(new) AS new, toString(expansion) AS expansion, toString(mrr_start) AS mrr_start,
              toString(mrr_end) AS mrr_end, toString(net_new) AS net_new
       FROM mrr_monthly WHERE project_id = 'hostile' ORDER BY month`,
    );
    expect(monthly).toEqual([
      {
        new: '999999999999999',
        expansion: '10999999999999989',
        mrr_start: '0',
        mrr_end: '11999999999999988',
        net_new: '11999999999999988',
      },
      {
        new: '0',
        expansion: '49',
        mrr_start: '11999999999999988',
        mrr_end: '12000000000000037',
        net_new: '49',
      },
    ]);
  });

  it('stores a record id once per project, the first copy, whatever day its copies are dated', async () => {
    const id = randomUUID();
    const copy = (path: string, timestamp: number) =>
      send(running.url, publicToken, {
        type: 'pageview',
        id,
        data: { session_id: `ids-${MARKER}`, path, timestamp },
      });
    expect((await copy('/first', DAY)).status).toBe(202);
    await landed('events', id);
    // A retry two days later (a client that kept its id across midnight), and one in upper case.
    expect((await copy('/second', DAY + 2 * 86_400_000)).status).toBe(202);
    const upper = id.toUpperCase();
    const res = await send(running.url, publicToken, {
      type: 'pageview',
      id: upper,
      data: { session_id: `ids-${MARKER}`, path: '/third' },
    });
    expect(res.status).toBe(202);
    const revenueId = randomUUID();
    for (const transaction of ['tx-first', 'tx-second']) {
      const r = await send(running.url, secretToken, {
        type: 'revenue',
        id: revenueId,
        data: revenueData(`ids-${MARKER}`, { transaction_id: `${transaction}-${revenueId}` }),
      });
      expect(r.status).toBe(202);
    }
    // Sentinels sent after them: once they landed, the copies were processed too (in order per topic).
    const sentinel = randomUUID();
    await send(running.url, publicToken, {
      type: 'pageview',
      id: sentinel,
      data: { session_id: 'ids', path: '/s' },
    });
    const revenueSentinel = randomUUID();
    await send(running.url, secretToken, {
      type: 'revenue',
      id: revenueSentinel,
      data: revenueData(`ids-${MARKER}`),
    });
    await landed('events', sentinel);
    await landed('revenue', revenueSentinel);
    const rows = await warehouse.query('SELECT path FROM events FINAL WHERE id = {id:String}', { id });
    expect(rows).toEqual([{ path: '/first' }]);
    const revenue = await warehouse.query<{ transaction_id: string }>(
      'SELECT transaction_id FROM revenue FINAL WHERE id = {id:String}',
      { id: revenueId },
    );
    expect(revenue).toEqual([{ transaction_id: `tx-first-${revenueId}` }]);
  });

  it('wrote none of the records’ values into any log line, on every path above', () => {
    const output = running.output();
    expect(output).toContain('record set aside as undeliverable'); // the paths did log
    expect(output).not.toContain(MARKER);
    expect(output).not.toContain('/blocked');
  });
});
