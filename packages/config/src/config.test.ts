import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, trustedProxies } from './index.ts';

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
});
