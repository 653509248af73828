// The property the 1e21 timestamp broke, over the whole pipeline as `npm start` runs it: fast-check makes
// envelopes the contract accepts, values at every bound included (the longest strings, astral characters,
// the most keys, the largest and the smallest money, the first and the last timestamps); each goes through
// the real gateway (202), the record log and the consumers into chDB, and lands exactly once with the
// values sent, or is set aside as a dead letter with a reason. The consumers never stop.
import { randomUUID } from 'node:crypto';
import { stringMap } from '@tally/consumer';
import {
  formatMicros,
  isExactMoney,
  LIMITS,
  MAX_MONEY,
  MAX_TIMESTAMP_MS,
  MIN_TIMESTAMP_MS,
  moneyText,
  validateIngest,
} from '@tally/contract';
import { FileTokenStore } from '@tally/tokens';
import type { Warehouse } from '@tally/warehouse';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually, tally, tempDataDir } from './support/processes.ts';
import {
  pipelineEnv,
  publishedWarehouse,
  send,
  startTallyProcess,
  type TallyProcess,
} from './support/tally-process.ts';

const PROJECT = 'property';
const HOUR = 3_600_000;

let dataDir: string;
let env: Record<string, string>;
let running: TallyProcess;
let warehouse: Warehouse;
let publicToken: string;
let secretToken: string;

beforeAll(async () => {
  dataDir = tempDataDir();
  // Bodies up to 1 MB, so that every value can be at its bound at once.
  env = pipelineEnv({ TALLY_DATA_DIR: dataDir, BODY_LIMIT: String(1024 * 1024) });
  const store = new FileTokenStore(dataDir);
  publicToken = (await store.create(PROJECT, 'public')).token;
  secretToken = (await store.create(PROJECT, 'secret')).token;
  await store.close();
  running = await startTallyProcess(env);
  warehouse = await publishedWarehouse(dataDir);
});
afterAll(async () => {
  await warehouse?.close();
  expect(await running?.stop('SIGTERM')).toBe(0);
});

// --- what the contract accepts, bounds included ---

/** Any text of up to `max` code points (astral ones too, never a lone surrogate), or exactly `max` of them. */
const text = (max: number, min = 0) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.string({ unit: 'binary', minLength: min, maxLength: Math.min(max, 24) }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('x'.repeat(max), '😀'.repeat(max), `é${'\u0000'.repeat(max - 1)}`),
    },
  );
const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });
const key = fc
  .string({ unit: 'binary', maxLength: 12 })
  .filter((k) => k !== '__proto__' && k !== 'constructor');
const jsonValue = fc.jsonValue({ maxDepth: 3 }).filter((v) => !JSON.stringify(v).includes('"__proto__"'));
const freeForm = fc.oneof(
  { weight: 4, arbitrary: fc.dictionary(key, jsonValue, { maxKeys: 6 }) },
  {
    weight: 1,
    arbitrary: fc.constant(
      Object.fromEntries(
        Array.from({ length: LIMITS.mapKeys }, (_, i) => [`${i}`.padEnd(LIMITS.mapKeyLength, 'k'), i]),
      ),
    ),
  },
);
const timestamp = optional(
  fc.oneof(
    fc.constantFrom(MIN_TIMESTAMP_MS, MAX_TIMESTAMP_MS - 1), // the last one is in the future: clamped
    fc.integer({ min: MIN_TIMESTAMP_MS, max: Date.now() }),
  ),
);
const money = fc.oneof(
  fc.constantFrom(MAX_MONEY, 999_999_999.999999, 0.000001, 49.99),
  fc
    .tuple(fc.bigInt({ min: 1n, max: 10n ** 15n - 1n }), fc.integer({ min: 0, max: 6 }))
    .map(([digits, places]) => Number(formatMicros(digits * 10n ** BigInt(6 - places))))
    .filter(isExactMoney),
);

const common = {
  session_id: text(LIMITS.identifier, 1),
  visitor_fingerprint: optional(text(LIMITS.identifier, 1)),
  timestamp,
};
const pageview = fc.record(
  {
    ...common,
    url: optional(text(LIMITS.url)),
    path: optional(text(LIMITS.path)),
    referrer: optional(text(LIMITS.url)),
    referrer_source: optional(text(LIMITS.label)),
    title: optional(text(LIMITS.title)),
    locale: optional(text(LIMITS.label)),
    utm_source: optional(text(LIMITS.label)),
    utm_medium: optional(text(LIMITS.label)),
    utm_campaign: optional(text(LIMITS.label)),
    utm_term: optional(text(LIMITS.label)),
    custom_field: optional(jsonValue),
  },
  { requiredKeys: ['session_id'] },
);
const event = fc.record(
  {
    ...common,
    event_name: text(LIMITS.identifier, 1),
    event_data: optional(freeForm),
    url: optional(text(LIMITS.url)),
  },
  { requiredKeys: ['session_id', 'event_name'] },
);
const identify = fc.record(
  { ...common, customer_id: text(LIMITS.identifier, 1) },
  { requiredKeys: ['customer_id'] },
);
const revenue = fc
  .record({
    visitor_fingerprint: text(LIMITS.identifier, 1),
    session_id: text(LIMITS.identifier, 1),
    customer_id: text(LIMITS.identifier, 1),
    event_type: fc.constantFrom(
      'purchase',
      'subscription',
      'renewal',
      'upgrade',
      'downgrade',
      'churn',
      'refund',
    ),
    amount: money,
    currency: fc.constantFrom('USD', 'eur', 'JPY'),
    mrr_impact: optional(
      fc.oneof(
        money,
        money.map((m) => -m),
      ),
    ),
    is_recurring: optional(fc.boolean()),
    metadata: optional(freeForm),
    payment_processor: optional(text(LIMITS.label)),
    timestamp,
  })
  .map((data) => ({
    ...data,
    // Negative amounts only where the contract allows them; every transaction new (no duplicates here).
    amount: ['churn', 'refund'].includes(data.event_type) ? -data.amount : data.amount,
    transaction_id: `tx-${randomUUID()}`,
  }));

/** Every field at its bound at once, one envelope of each type: always among the envelopes sent. */
const longest = (max: number) => '😀'.repeat(max);
const atTheBounds = [
  {
    type: 'pageview' as const,
    data: {
      session_id: longest(LIMITS.identifier),
      visitor_fingerprint: longest(LIMITS.identifier),
      url: `https://x.example/${'p'.repeat(LIMITS.url - 18)}`,
      path: longest(LIMITS.path),
      referrer: longest(LIMITS.url),
      referrer_source: longest(LIMITS.label),
      title: longest(LIMITS.title),
      locale: longest(LIMITS.label),
      utm_source: longest(LIMITS.label),
      utm_medium: longest(LIMITS.label),
      utm_campaign: longest(LIMITS.label),
      utm_term: longest(LIMITS.label),
      timestamp: MAX_TIMESTAMP_MS - 1,
    },
  },
  {
    type: 'event' as const,
    data: {
      session_id: 's',
      event_name: longest(LIMITS.identifier),
      event_data: Object.fromEntries(
        Array.from({ length: LIMITS.mapKeys }, (_, i) => [
          `${i}${longest(LIMITS.mapKeyLength - String(i).length)}`,
          longest(200),
        ]),
      ),
      timestamp: MIN_TIMESTAMP_MS,
    },
  },
  {
    type: 'identify' as const,
    data: {
      customer_id: longest(LIMITS.identifier),
      session_id: longest(LIMITS.identifier),
      timestamp: Date.now(),
    },
  },
  ...[MAX_MONEY, 0.000001, 999_999_999.999999].map((amount) => ({
    type: 'revenue' as const,
    data: {
      visitor_fingerprint: longest(LIMITS.identifier),
      session_id: 's',
      customer_id: 'c',
      amount,
      mrr_impact: -amount,
      event_type: 'downgrade',
      transaction_id: `tx-${randomUUID()}`,
      metadata: Object.fromEntries(
        Array.from({ length: LIMITS.mapKeys }, (_, i) => [`k${i}`, { nested: [i, null, 'x'] }]),
      ),
    },
  })),
];

const envelope = fc.oneof(
  pageview.map((data) => ({ type: 'pageview' as const, data })),
  event.map((data) => ({ type: 'event' as const, data })),
  identify.map((data) => ({ type: 'identify' as const, data })),
  revenue.map((data) => ({ type: 'revenue' as const, data })),
);

// --- where each record lands ---

interface Stored {
  table: 'events' | 'identities' | 'revenue';
  rows: Record<string, unknown>[];
}

async function stored(type: string, id: string): Promise<Stored> {
  if (type === 'revenue') {
    const rows = await warehouse.query(
      `SELECT transaction_id, customer_id, visitor_id, session_id, event_type, toString(amount) AS amount,
              toString(mrr_impact) AS mrr_impact, currency, is_recurring, metadata, payment_processor, payload,
              toUnixTimestamp64Milli(timestamp) AS ts, toUnixTimestamp64Milli(client_timestamp) AS client_ts
       FROM revenue FINAL WHERE id = {id:String}`,
      { id },
    );
    return { table: 'revenue', rows };
  }
  if (type === 'identify') {
    const rows = await warehouse.query(
      `SELECT customer_id, visitor_id, session_id, toUnixTimestamp64Milli(timestamp) AS ts
       FROM identities FINAL WHERE id = {id:String}`,
      { id },
    );
    return { table: 'identities', rows };
  }
  const rows = await warehouse.query(
    `SELECT session_id, visitor_id, event_name, event_data, url, path, referrer, referrer_source, title, locale,
            utm_source, utm_medium, utm_campaign, utm_term, extra, toUnixTimestamp64Milli(timestamp) AS ts,
            toUnixTimestamp64Milli(client_timestamp) AS client_ts, timestamp_clamped
     FROM events FINAL WHERE id = {id:String}`,
    { id },
  );
  return { table: 'events', rows };
}

const given = (value: unknown): value is string => typeof value === 'string' && value !== '';

/** The stored row holds the values sent (what a column derives when the client sent nothing is not compared). */
function expectSent(type: string, data: Record<string, unknown>, row: Record<string, unknown>) {
  if (typeof data.timestamp === 'number') {
    const clamped = data.timestamp > Date.now() + HOUR;
    if (!clamped) expect(Number(row.ts)).toBe(data.timestamp);
    if (type !== 'identify') expect(Number(row.client_ts)).toBe(data.timestamp);
  }
  for (const field of [
    'session_id',
    'customer_id',
    'event_name',
    'url',
    'referrer',
    'title',
    'locale',
    'utm_source',
    'utm_medium',
    'utm_campaign',
    'utm_term',
    'transaction_id',
    'payment_processor',
  ]) {
    if (field in data && data[field] !== undefined && field in row)
      expect(row[field], field).toBe(data[field] ?? '');
  }
  if (given(data.visitor_fingerprint)) expect(row.visitor_id).toBe(data.visitor_fingerprint);
  if (given(data.path)) expect(row.path).toBe(data.path);
  if (given(data.referrer_source)) expect(row.referrer_source).toBe(data.referrer_source);
  if (type === 'event') expect(row.event_data).toEqual(stringMap(data.event_data));
  if (type === 'pageview' && data.custom_field !== undefined) {
    expect(JSON.parse(row.extra as string)).toEqual({ custom_field: data.custom_field });
  }
  if (type === 'revenue') {
    expect(row.amount).toBe(moneyText(data.amount as number));
    expect(row.mrr_impact).toBe(typeof data.mrr_impact === 'number' ? moneyText(data.mrr_impact) : null);
    const currency = String(data.currency ?? 'USD').toUpperCase(); // the contract's default
    expect(row.currency).toBe(currency);
    expect(row.metadata).toEqual(stringMap(data.metadata));
    expect(JSON.parse(row.payload as string)).toEqual({ ...data, currency });
  }
}

it('lands every accepted envelope exactly once with the values sent, or sets it aside with a reason', async () => {
  let runs = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(envelope, { minLength: 5, maxLength: 25 }), async (generated) => {
      // The first run also sends the envelopes at the bounds.
      const envelopes = runs++ === 0 ? [...atTheBounds, ...generated] : generated;
      const sent: Array<{ id: string; type: string; data: Record<string, unknown> }> = [];
      for (const body of envelopes) {
        const id = randomUUID();
        const checked = validateIngest(structuredClone({ ...body, id }));
        expect(checked.ok ? '' : checked.message, 'the generator makes valid envelopes').toBe('');
        const res = await send(running.url, body.type === 'revenue' ? secretToken : publicToken, {
          ...body,
          id,
        });
        expect(res.status, await res.clone().text()).toBe(202);
        sent.push({ id, type: body.type, data: body.data as Record<string, unknown> });
      }
      await eventually(60_000, `${sent.length} records landed`, async () => {
        for (const { id, type } of sent) if ((await stored(type, id)).rows.length === 0) return false;
        return true;
      }).catch(async (error: Error) => {
        // A record the contract accepts but the warehouse cannot store would be here, with its reason.
        const letters = await tally(['dead-letters', 'list', '--json'], env);
        throw new Error(`${error.message}; dead letters: ${letters}`);
      });
      for (const { id, type, data } of sent) {
        const { rows } = await stored(type, id);
        expect(rows, `${type} ${id} stored once`).toHaveLength(1);
        expectSent(type, data, rows[0] as Record<string, unknown>);
      }
    }),
    // No shrinking: each attempt goes through the whole pipeline; a failure reports the run as drawn.
    { numRuns: 8, endOnFailure: true },
  );
  expect(runs).toBe(8);
  // The consumers never stopped, and nothing was set aside.
  expect(running.process.exitCode).toBeNull();
  expect((await fetch(`${running.adminUrl}/readyz`)).status).toBe(200);
  expect(JSON.parse(await tally(['dead-letters', 'list', '--json'], env))).toEqual([]);
}, 600_000);
