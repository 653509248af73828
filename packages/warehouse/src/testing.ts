// Test fixtures of the warehouse conformance suite, shared with the reports' (@tally/reports/conformance):
// an `events` row as the analytics consumer stores it, and a database of each test's own.
import { randomUUID } from 'node:crypto';
import { afterEach } from 'vitest';
import { migrate } from './migrations.ts';
import type { Warehouse } from './warehouse.ts';

/** Opens the backend under test on a database of its own. */
export type OpenWarehouse = (database: string) => Promise<Warehouse>;

/** The day eventRow's rows fall on (2026-03-10, midnight UTC, in ms). */
export const EVENT_DAY = Date.parse('2026-03-10T00:00:00Z');

/** A stored `events` row (a desktop Chrome pageview of visitor v1, an hour into EVENT_DAY), with `overrides`. */
export function eventRow(overrides: Record<string, unknown>): Record<string, unknown> {
  return {
    project_id: 'p',
    type: 'pageview',
    id: randomUUID(),
    timestamp: EVENT_DAY + 3_600_000,
    received_at: EVENT_DAY + 3_600_000,
    client_timestamp: null,
    timestamp_clamped: false,
    visitor_id: 'v1',
    visitor_id_derived: false,
    session_id: 's1',
    event_name: '',
    event_data: {},
    url: 'https://shop.example/',
    hostname: 'shop.example',
    path: '/',
    referrer: '',
    referrer_source: '',
    referrer_medium: '',
    title: '',
    locale: '',
    utm_source: '',
    utm_medium: '',
    utm_campaign: '',
    utm_term: '',
    utm_content: '',
    browser: 'Chrome',
    browser_version: '124',
    os: 'Linux',
    os_version: '',
    device_type: 'desktop',
    is_bot: false,
    user_agent: '',
    extra: '',
    ...overrides,
  };
}

/**
 * For the tests of one describe block: opens a warehouse on a database of the test's own, migrated unless
 * told otherwise, and closes it after the test.
 */
export function freshWarehouses(open: OpenWarehouse): (migrated?: boolean) => Promise<Warehouse> {
  const opened: Warehouse[] = [];
  afterEach(async () => {
    for (const w of opened.splice(0)) await w.close();
  });
  return async (migrated = true) => {
    const warehouse = await open(`conformance_${randomUUID().replace(/-/g, '')}`);
    opened.push(warehouse);
    if (migrated) await migrate(warehouse);
    return warehouse;
  };
}
