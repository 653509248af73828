// Every argument mistake of every command is answered alike: its message, then the usage, exit code 2,
// and nothing opened or created for it. One row per mistake, run in-process through runCli on a data
// directory of its own; a failure that is not the command line's (an unknown project) stays exit code 1.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runCli, USAGE } from './cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'tally-cli-usage-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let stderr = '';
let stdout = '';
beforeEach(() => {
  stderr = '';
  stdout = '';
  // This directory, and nothing of the environment's Redis, Kafka or ClickHouse.
  vi.stubEnv('TALLY_DATA_DIR', dir);
  vi.stubEnv('TALLY_ENV_FILE', '/dev/null'); // not the checkout's .env
  for (const name of ['REDIS_URL', 'KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL', 'CLICKHOUSE_URL'])
    vi.stubEnv(name, '');
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr += String(chunk);
    return true;
  });
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

/** Each mistake and what its message says. */
const MISTAKES: Array<[string[], RegExp]> = [
  [['frobnicate'], /unknown command "frobnicate"/],
  [['import'], /unknown import source "" \(csv, stripe\)/],
  [['import', 'paypal'], /unknown import source "paypal" \(csv, stripe\)/],
  [['import', 'stripe'], /tally import stripe --project P/],
  [['import', 'csv'], /tally import csv --project P FILE/],
  [['import', 'csv', '--project', 'shop'], /tally import csv --project P FILE/],
  [['tokens'], /unknown tokens action ""/],
  [['tokens', 'frobnicate'], /unknown tokens action "frobnicate"/],
  [['tokens', 'list', '--bogus'], /Unknown option '--bogus'/],
  [['tokens', 'create'], /tokens create needs --project/],
  [['tokens', 'create', '--project', 'shop'], /needs --kind public, secret or read/],
  [['tokens', 'create', '--project', 'shop', '--kind', 'admin'], /needs --kind public, secret or read/],
  [['tokens', 'create', '--project', 'no/such', '--kind', 'public'], /project id must be/],
  [['tokens', 'revoke'], /tokens revoke needs a token/],
  [['projects', 'frobnicate'], /unknown projects action "frobnicate"/],
  [['projects', 'show'], /projects show needs a project id/],
  [['projects', 'set'], /projects set needs a project id/],
  [['projects', 'set', 'shop'], /needs --allowed-origins/],
  [['projects', 'set', 'no/such', '--allowed-origins', ''], /project id must be/],
  [['projects', 'set', 'shop', '--allowed-origins', 'https://shop.example/path'], /is not an origin/],
  [['users'], /unknown users action ""/],
  [['users', 'add'], /users add needs an email/],
  [['users', 'add', 'not-an-email', '--project', 'shop'], /not an email address/],
  [['users', 'add', 'you@example.com'], /grants at least one project/],
  [['users', 'add', 'you@example.com', '--project', 'no/such'], /project id must be/],
  [['users', 'link'], /users link needs an email/],
  [['users', 'grant', 'you@example.com'], /grants at least one project/],
  [['users', 'remove'], /users remove needs an email/],
  [['sql'], /sql needs a statement/],
  [['report'], /unknown report ""/],
  [['report', 'frobnicate', '--project', 'shop'], /unknown report "frobnicate"/],
  [['report', 'traffic'], /--project <id> is required/],
  [['report', 'mrr', '--project', 'shop', '--interval', 'week'], /--interval takes day or month/],
  [['report', 'mrr', '--project', 'shop', '--from', '2026-05', '--to', '2026-01'], /--from 2026-05 is after/],
  [['report', 'attribution', '--project', 'shop', '--by', 'moon'], /--by takes/],
  [['report', 'attribution', '--project', 'shop', '--touch', 'middle'], /--touch takes/],
  [['report', 'attribution', '--project', 'shop', '--from', '2026-1'], /from must be a month YYYY-MM/],
  [['report', 'reconciliation', '--project', 'shop', '--month', '2026-13'], /--month must be a month/],
  [['report', 'breakdown', '--project', 'shop', '--by', 'moon'], /by must be one of plan/],
  [['report', 'breakdown', '--project', 'shop', '--filters', 'plan~~pro'], /plan~~pro|filter/],
  [
    ['report', 'revenue/mrr/daily', '--project', 'shop', '--filters', 'plan==pro'],
    /--filters is not a parameter of revenue\/mrr\/daily/,
  ],
  [
    ['report', 'mrr', '--project', 'shop', '--daily', '--filters', 'plan==pro'],
    /--filters is not a parameter/,
  ],
  [
    ['report', 'revenue/funnel', '--project', 'shop', '--filters', 'plan==pro'],
    /--filters is not a parameter/,
  ],
  [
    ['report', 'traffic/breakdown/moon', '--project', 'shop'],
    /--dimension of traffic\/breakdown\/<dimension> takes page/,
  ],
  [
    ['report', 'traffic/summary', '--project', 'shop', '--compare', 'week'],
    /--compare takes previous, year, none/,
  ],
  [['report', 'traffic/summary', '--project', 'shop', '--filters', 'moon==1'], /unknown filter dimension/],
  [['report', 'revenue/records', '--project', 'shop'], /--figure is required/],
  [['report', 'cohorts', '--project', 'shop', '--from', '2026-13'], /from must be a month YYYY-MM/],
  [['report', 'cohorts', '--project', 'shop', '--from', '2026-05', '--to', '2026-01'], /is after --to/],
  [['report', 'cohorts', '--project', 'shop', '--by', 'plan'], /--by is not a parameter of revenue\/cohorts/],
  [
    ['report', 'cohorts', '--project', 'shop', '--currency', 'dollars'],
    /currency must be a three-letter code/,
  ],
  [['report', 'revenue/customers', '--project', 'shop', '--limit', '0'], /--limit takes a whole number/],
  [['revenue'], /unknown revenue action ""/],
  [['revenue', 'search', '--metadata', 'novalue'], /--metadata takes key=value/],
  [['revenue', 'search'], /--project <id> is required/],
  [['revenue', 'rates'], /unknown rates action ""/],
  [['revenue', 'rates', 'load'], /revenue rates load <file.csv>/],
  [['log'], /log needs "groups" or "forget-group <group>"/],
  [['log', 'forget-group'], /needs the name of the group/],
  [['dead-letters'], /dead-letters needs one of/],
  [['dead-letters', 'replay'], /needs the ids of the letters, or --all/],
  [['dead-letters', 'show'], /dead-letters show needs one id/],
  [['kafka'], /kafka needs "compatibility/],
  [['kafka', 'compatibility', 'extra'], /kafka needs "compatibility/],
  [['kafka', 'compatibility', '--set', 'SOMETIMES'], /--set takes one of/],
  [['kafka', 'compatibility', '--type', 'moon'], /--type takes one of/],
  [['warehouse'], /warehouse needs "credentials/],
  [['warehouse', 'credentials', 'extra'], /warehouse needs "credentials/],
];

describe('an argument mistake', () => {
  it.each(MISTAKES)('tally %j: exit 2, the message, then the usage', async (args, message) => {
    expect(await runCli(args)).toBe(2);
    const [first, ...rest] = stderr.split('\n');
    expect(first).toMatch(/^tally: /);
    expect(first).toMatch(message);
    expect(rest.join('\n')).toContain(USAGE);
    expect(stdout).toBe('');
  });

  it('opens and creates nothing in the data directory', () => {
    expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
  });

  it('tally import --help prints the usage, with the import command in it, exit 0', async () => {
    expect(await runCli(['import', '--help'])).toBe(0);
    expect(stdout).toContain(USAGE);
    expect(USAGE).toContain('import csv --project P FILE|-');
  });

  it('with no command at all prints the usage too, exit 2', async () => {
    expect(await runCli([])).toBe(2);
    expect(stdout).toContain(USAGE);
  });
});

it('a failure that is not the command line’s is exit code 1, without the usage', async () => {
  expect(await runCli(['tokens', 'revoke', 'pub_unknown'])).toBe(1);
  expect(stderr).toBe('tally: no active token matches\n');
  expect(await runCli(['kafka', 'compatibility'])).toBe(1);
  expect(stderr).toContain('the record log is not Kafka');
  expect(stderr).not.toContain(USAGE);
});
