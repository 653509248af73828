// Test fixtures of the warehouse conformance suite, shared with the reports' (@tally/reports/conformance):
// an `events` row as the analytics consumer stores it, and a database of each test's own. And what of the
// backends a process that imports a package has loaded (backendsLoadedBy). And a warehouse that tells a
// test each insert it stored (afterInserts), or holds its queries back (beforeQueries).
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach } from 'vitest';
import { migrate } from './migrations.ts';
import type { Row, Warehouse } from './warehouse.ts';

const run = promisify(execFile);

/** `warehouse` with one method replaced, the others its own. */
function replacing<K extends keyof Warehouse>(
  warehouse: Warehouse,
  name: K,
  method: Warehouse[K],
): Warehouse {
  return new Proxy(warehouse, {
    get(target, key) {
      if (key === name) return method;
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * `warehouse`, calling `after` once each insert is stored: the moment a test needs, as a rebalance that
 * takes a consumer's partitions while its batch lands.
 */
export function afterInserts(
  warehouse: Warehouse,
  after: (table: string, rows: readonly Row[]) => void,
): Warehouse {
  return replacing(warehouse, 'insert', async (table, rows) => {
    await warehouse.insert(table, rows);
    after(table, rows);
  });
}

/** `warehouse`, each query waiting for `before` (its SQL given) first: a test holds a read back. */
export function beforeQueries(
  warehouse: Warehouse,
  before: (sql: string) => Promise<void> | void,
): Warehouse {
  const query = async (...args: Parameters<Warehouse['query']>) => {
    await before(args[0]);
    return warehouse.query(...args);
  };
  return replacing(warehouse, 'query', query as Warehouse['query']);
}

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

/** What of the backends a process has loaded: chDB's native library mapped, chDB's or @clickhouse/client's modules. */
export interface BackendsLoaded {
  chdbMapped: boolean;
  chdb: boolean;
  clickhouseClient: boolean;
}

/**
 * Runs `script` (the body of an ES module, the workspace packages resolved to their sources) in a process
 * of its own, where `mark(name)` takes down what of the backends is loaded at that point: the native library
 * from /proc/self/maps, the modules (CommonJS, both) from the module cache. Resolves with every mark.
 */
export async function backendsLoadedBy(script: string): Promise<Record<string, BackendsLoaded>> {
  const prelude = `
    import { readFileSync } from 'node:fs';
    import { createRequire } from 'node:module';
    const cache = createRequire(import.meta.url).cache;
    const marks = {};
    const has = (pattern) => Object.keys(cache).some((file) => pattern.test(file));
    const mark = (name) => {
      marks[name] = {
        chdbMapped: /libchdb/.test(readFileSync('/proc/self/maps', 'utf8')),
        chdb: has(/\\/node_modules\\/(chdb|@chdb\\/[^/]+)\\//),
        clickhouseClient: has(/\\/node_modules\\/@clickhouse\\/client(-common)?\\//),
      };
    };`;
  const { stdout } = await run(
    process.execPath,
    [
      '--conditions=@tally/source',
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `${prelude}\n${script}\nprocess.stdout.write(JSON.stringify(marks));`,
    ],
    { cwd: fileURLToPath(new URL('../../../', import.meta.url)), timeout: 60_000 },
  );
  return JSON.parse(stdout) as Record<string, BackendsLoaded>;
}
