import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { isSettingName, loadConfig, trustedProxies } from './index.ts';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({ TALLY_ENV_FILE: undefined });
    expect(config).toMatchObject({
      PORT: 8080,
      ADMIN_PORT: 8081,
      ADMIN_HOST: '127.0.0.1',
      TALLY_DATA_DIR: './.tally',
      RATE_LIMIT_PER_HOUR: 2000,
      BODY_LIMIT: 65536,
      LOG_LEVEL: 'info',
      TRUST_PROXY: '',
    });
    expect(config.REDIS_URL).toBeUndefined();
  });

  it("reads the working directory's .env for the process environment only, not for an environment given", async () => {
    // A .env left in a checkout (as the README suggests) must not change what a test's own environment says.
    const dir = mkdtempSync(join(tmpdir(), 'tally-cfg-'));
    writeFileSync(join(dir, '.env'), 'PORT=7100\n');
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
    const config = pathToFileURL(resolve(import.meta.dirname, 'index.ts')).href;
    const script = `import { loadConfig } from '${config}';
      process.stdout.write(JSON.stringify([loadConfig().PORT, loadConfig({}).PORT, loadConfig({ PORT: '7200' }).PORT]));`;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', tsx, '--input-type=module', '-e', script],
      { cwd: dir, env: { PATH: process.env.PATH }, timeout: 60_000 },
    );
    expect(JSON.parse(stdout)).toEqual([7100, 8080, 7200]);
  });

  it('reads the environment, coercing numbers, and ignores unrelated variables', () => {
    const config = loadConfig({ PORT: '9000', RATE_LIMIT_PER_HOUR: '10', HOME: '/root' });
    expect(config.PORT).toBe(9000);
    expect(config.RATE_LIMIT_PER_HOUR).toBe(10);
    expect(config).not.toHaveProperty('HOME');
  });

  it('reads an env file, with the environment winning over it', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'tally-cfg-')), 'tally.env');
    writeFileSync(file, 'PORT=7000\nLOG_LEVEL=debug\n');
    expect(loadConfig({ TALLY_ENV_FILE: file })).toMatchObject({ PORT: 7000, LOG_LEVEL: 'debug' });
    expect(loadConfig({ TALLY_ENV_FILE: file, PORT: '7001' }).PORT).toBe(7001);
    expect(() => loadConfig({ TALLY_ENV_FILE: `${file}.missing` })).toThrow(/does not exist/);
  });

  it('rejects invalid values with the setting named', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL/);
  });

  it('parses TRUST_PROXY into a list', () => {
    expect(trustedProxies(loadConfig({}))).toBe(false);
    expect(trustedProxies(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }))).toEqual([
      '10.0.0.0/8',
      '127.0.0.1',
    ]);
  });

  it('takes a ClickHouse cluster name, or none', () => {
    const server = { CLICKHOUSE_URL: 'http://ch:8123' };
    expect(loadConfig({}).CLICKHOUSE_CLUSTER).toBeUndefined();
    expect(loadConfig({ ...server, CLICKHOUSE_CLUSTER: 'tally_cluster' }).CLICKHOUSE_CLUSTER).toBe(
      'tally_cluster',
    );
    expect(() => loadConfig({ ...server, CLICKHOUSE_CLUSTER: 'a cluster; DROP' })).toThrow(
      /CLICKHOUSE_CLUSTER/,
    );
  });
});

describe('what the settings decide (derived once, as they load)', () => {
  it('makes the data directory absolute, against the directory it is loaded in', () => {
    expect(loadConfig({ TALLY_DATA_DIR: './here' }).dataDir).toBe(resolve('here'));
    expect(loadConfig({ TALLY_DATA_DIR: '/var/lib/tally' }).dataDir).toBe('/var/lib/tally');
  });

  it('chooses the embedded log, chDB and the data directory by default', () => {
    expect(loadConfig({}).backends).toEqual({
      log: { kind: 'embedded' },
      warehouse: { kind: 'chdb' },
      state: { kind: 'files' },
    });
  });

  it('chooses Kafka, a ClickHouse server and Redis when they are named, with their settings parsed once', () => {
    const config = loadConfig({
      KAFKA_BROKERS: 'k1:9092, k2:9092,',
      SCHEMA_REGISTRY_URL: 'http://registry:8081/',
      CLICKHOUSE_URL: 'http://ch:8123',
      CLICKHOUSE_CLUSTER: 'tally_cluster',
      REDIS_URL: 'redis://r:6379/0',
    });
    expect(config.backends).toEqual({
      log: { kind: 'kafka', brokers: ['k1:9092', 'k2:9092'], schemaRegistryUrl: 'http://registry:8081' },
      warehouse: { kind: 'clickhouse', url: 'http://ch:8123', cluster: 'tally_cluster' },
      state: { kind: 'redis', url: 'redis://r:6379/0' },
    });
  });

  it('refuses Kafka without its schema registry, a registry without Kafka, and a cluster without a server', () => {
    const together = /KAFKA_BROKERS and SCHEMA_REGISTRY_URL go together/;
    expect(() => loadConfig({ KAFKA_BROKERS: 'k1:9092' })).toThrow(together);
    expect(() => loadConfig({ SCHEMA_REGISTRY_URL: 'http://registry:8081' })).toThrow(together);
    expect(() => loadConfig({ CLICKHOUSE_CLUSTER: 'tally_cluster' })).toThrow(
      /CLICKHOUSE_CLUSTER needs CLICKHOUSE_URL/,
    );
  });

  it('checks the rules in the env file too', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'tally-cfg-')), 'tally.env');
    writeFileSync(file, 'KAFKA_BROKERS=k1:9092\n');
    expect(() => loadConfig({ TALLY_ENV_FILE: file })).toThrow(/go together/);
    expect(loadConfig({ TALLY_ENV_FILE: file, SCHEMA_REGISTRY_URL: 'http://r:8081' }).backends.log.kind).toBe(
      'kafka',
    );
  });
});

describe('secrets from files (<NAME>_FILE)', () => {
  const secret = (text: string) => {
    const file = join(mkdtempSync(join(tmpdir(), 'tally-secret-')), 'secret');
    writeFileSync(file, text);
    return file;
  };

  it('reads a password from its file, without the trailing newline, into its URL', () => {
    const config = loadConfig({
      REDIS_URL: 'redis://redis:6379/0',
      REDIS_PASSWORD_FILE: secret('s3cret/+@:%\n'),
      CLICKHOUSE_URL: 'http://tally@clickhouse-01:8123',
      CLICKHOUSE_PASSWORD_FILE: secret('pa ss\n'),
    });
    const redis = new URL(config.REDIS_URL ?? '');
    expect([redis.host, redis.pathname, decodeURIComponent(redis.password)]).toEqual([
      'redis:6379',
      '/0',
      's3cret/+@:%',
    ]);
    const clickhouse = new URL(config.CLICKHOUSE_URL ?? '');
    expect([clickhouse.username, decodeURIComponent(clickhouse.password)]).toEqual(['tally', 'pa ss']);
  });

  it('reads a whole URL from its file, and a _FILE named in the env file', () => {
    const envFile = join(mkdtempSync(join(tmpdir(), 'tally-cfg-')), 'tally.env');
    writeFileSync(envFile, `CLICKHOUSE_URL_FILE=${secret('http://u:p@ch:8123\n')}\n`);
    expect(loadConfig({ TALLY_ENV_FILE: envFile }).CLICKHOUSE_URL).toBe('http://u:p@ch:8123');
  });

  it('refuses a secret given twice, or a file it cannot read, naming the setting', () => {
    expect(() => loadConfig({ REDIS_PASSWORD: 'a', REDIS_PASSWORD_FILE: secret('b') })).toThrow(
      /REDIS_PASSWORD and REDIS_PASSWORD_FILE/,
    );
    expect(() => loadConfig({ REDIS_URL: 'redis://:a@r:6379', REDIS_PASSWORD: 'b' })).toThrow(
      /REDIS_URL has a password/,
    );
    expect(() => loadConfig({ CLICKHOUSE_PASSWORD_FILE: '/nonexistent/secret' })).toThrow(
      /CLICKHOUSE_PASSWORD_FILE \/nonexistent\/secret cannot be read: ENOENT/,
    );
  });

  it('knows the _FILE names of secret settings only', () => {
    expect(isSettingName('REDIS_URL')).toBe(true);
    expect(isSettingName('REDIS_PASSWORD_FILE')).toBe(true);
    expect(isSettingName('CLICKHOUSE_URL_FILE')).toBe(true);
    expect(isSettingName('PORT_FILE')).toBe(false);
    expect(isSettingName('REDIS_PASSWORD_FILES')).toBe(false);
  });
});
