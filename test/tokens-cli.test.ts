// Tokens created and revoked with the tally CLI take effect on a running gateway within 5 seconds, with
// the token file in the data directory and with Redis (where every replica sees the change); so do a
// project's allowed origins (`tally projects set --allowed-origins`).
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, inject, it } from 'vitest';
import {
  eventually,
  type GatewayProcess,
  postIngest,
  startGatewayProcess,
  tally,
  tempDataDir,
} from './support/processes.ts';

const pageview = { type: 'pageview', data: { session_id: 's1', url: 'https://example.com/' } };

const setups = [
  ['the data directory', () => ({ TALLY_DATA_DIR: tempDataDir() })],
  [
    'Redis',
    () => ({
      TALLY_DATA_DIR: tempDataDir(),
      REDIS_URL: inject('redisUrl'),
      REDIS_KEY_PREFIX: `test:${randomUUID()}:`,
    }),
  ],
] as const;

describe.each(setups)('tally tokens with tokens in %s', (_name, makeEnv) => {
  const running: GatewayProcess[] = [];
  afterEach(async () => {
    for (const g of running.splice(0)) await g.stop('SIGKILL');
  });

  it('creates a token that a running gateway accepts within 5 s, and revokes it within 5 s', async () => {
    const env = makeEnv();
    const gateway = await startGatewayProcess(env);
    running.push(gateway);
    expect(gateway.output()).toContain('npx tally tokens create');

    const created = await tally(['tokens', 'create', '--project', 'cli-test', '--kind', 'public'], env);
    const token = created.trim().split('\n').at(-1) as string;
    expect(token).toMatch(/^pub_[0-9A-Za-z]{32,}$/);
    await eventually(
      5000,
      'the new token being accepted',
      async () => (await postIngest(gateway.url, pageview, token)).status === 202,
    );

    const listed = JSON.parse(await tally(['tokens', 'list', '--json'], env)) as Array<
      Record<string, unknown>
    >;
    expect(listed).toEqual([
      expect.objectContaining({ project_id: 'cli-test', kind: 'public', revoked_at: null }),
    ]);
    expect(JSON.stringify(listed)).not.toContain(token);

    await tally(['tokens', 'revoke', token], env);
    await eventually(5000, 'the revoked token being refused', async () => {
      const res = await postIngest(gateway.url, pageview, token);
      return res.status === 401 && ((await res.json()) as { error?: string }).error === 'Invalid API token';
    });
  });

  it('creates secret tokens that may send revenue, and revokes by id', async () => {
    const env = makeEnv();
    const gateway = await startGatewayProcess(env);
    running.push(gateway);
    const token = (await tally(['tokens', 'create', '--project', 'p2', '--kind', 'secret'], env))
      .trim()
      .split('\n')
      .at(-1) as string;
    expect(token).toMatch(/^sec_[0-9A-Za-z]{32,}$/);
    const revenue = {
      type: 'revenue',
      data: { visitor_fingerprint: 'v', session_id: 's', customer_id: 'c', amount: 10, transaction_id: 't1' },
    };
    await eventually(
      5000,
      'revenue accepted',
      async () => (await postIngest(gateway.url, revenue, token)).status === 202,
    );
    const [info] = JSON.parse(await tally(['tokens', 'list', '--json'], env)) as Array<{ id: string }>;
    await tally(['tokens', 'revoke', info?.id as string], env);
    await eventually(
      5000,
      'the revoked token being refused',
      async () => (await postIngest(gateway.url, revenue, token)).status === 401,
    );
  });

  it("applies a project's allowed origins within 5 s: other browser origins 403, servers pass, cleared by ''", async () => {
    const env = makeEnv();
    const gateway = await startGatewayProcess(env);
    running.push(gateway);
    const created = await tally(['tokens', 'create', '--project', 'shop', '--kind', 'public'], env);
    const token = created.trim().split('\n').at(-1) as string;
    const from = (origin?: string) =>
      fetch(`${gateway.url}/api/ingest`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain', ...(origin && { origin }) },
        body: JSON.stringify({ ...pageview, token }),
      });
    await eventually(
      5000,
      'the token accepted',
      async () => (await from('https://evil.example')).status === 202,
    );

    const set = await tally(
      ['projects', 'set', 'shop', '--allowed-origins', 'https://shop.example,https://www.shop.example'],
      env,
    );
    expect(set).toContain('https://shop.example, https://www.shop.example');
    await eventually(5000, 'another origin refused', async () => {
      const res = await from('https://evil.example');
      return (
        res.status === 403 &&
        ((await res.json()) as { error?: string }).error === 'Origin not allowed for this project'
      );
    });
    expect((await from('https://www.shop.example')).status).toBe(202);
    expect((await from()).status).toBe(202); // a server: no Origin
    const shown = JSON.parse(await tally(['projects', 'show', 'shop', '--json'], env));
    expect(shown).toMatchObject({
      project_id: 'shop',
      allowed_origins: ['https://shop.example', 'https://www.shop.example'],
      active_tokens: { public: 1 },
    });
    expect(await tally(['projects', 'list'], env)).toContain(
      'allowed origins: https://shop.example, https://www.shop.example',
    );

    await tally(['projects', 'set', 'shop', '--allowed-origins', ''], env);
    await eventually(
      5000,
      'any origin again',
      async () => (await from('https://evil.example')).status === 202,
    );
    expect(await tally(['projects', 'list'], env)).toContain('allowed origins: any');
  });
});
