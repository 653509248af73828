import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  FileTokenStore,
  generateToken,
  hashToken,
  isWellFormedToken,
  normalizeOrigin,
  TokenVerifier,
} from './index.ts';

describe('tokens', () => {
  it('are pub_/sec_ and 32 base62 characters, all different', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const token = generateToken(i % 2 ? 'public' : 'secret');
      expect(token).toMatch(/^(pub|sec)_[0-9A-Za-z]{32}$/);
      expect(isWellFormedToken(token)).toBe(true);
      seen.add(token);
    }
    expect(seen.size).toBe(200);
    expect(isWellFormedToken('pub_short')).toBe(false);
  });

  it('are stored only as their hash', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tally-tok-'));
    const store = new FileTokenStore(dir);
    const { token, info } = await store.create('shop', 'secret');
    const file = readFileSync(join(dir, 'tokens.json'), 'utf8');
    expect(file).not.toContain(token);
    expect(file).toContain(hashToken(token));
    expect(info).toMatchObject({ project_id: 'shop', kind: 'secret', revoked_at: null });
    await expect(store.create('bad project!', 'public')).rejects.toThrow(/project id/);
  });

  it('are verified from memory and refreshed when the store changes', async () => {
    const store = new FileTokenStore(mkdtempSync(join(tmpdir(), 'tally-tok-')));
    const verifier = new TokenVerifier(store, { refreshMs: 60_000 });
    await verifier.refresh();
    const { token, info } = await store.create('shop', 'public');
    expect(verifier.verify(token)).toBeNull();
    await verifier.refresh();
    expect(verifier.verify(token)).toMatchObject({ id: info.id, kind: 'public' });
    expect(await store.revoke(info.id)).toBe(true);
    expect(await store.revoke(info.id)).toBe(false);
    await verifier.refresh();
    expect(verifier.verify(token)).toBeNull();
    expect(verifier.verify('not a token')).toBeNull();
  });
});

describe('read keys', () => {
  it('are read_ and 32 base62 characters, stored hashed, listed and revocable like the others', async () => {
    const store = new FileTokenStore(mkdtempSync(join(tmpdir(), 'tally-tok-')));
    const { token, info } = await store.create('shop', 'read');
    expect(token).toMatch(/^read_[0-9A-Za-z]{32}$/);
    expect(info).toMatchObject({ kind: 'read', project_id: 'shop', hint: `${token.slice(0, 9)}…` });
    expect(readFileSync(store.path, 'utf8')).not.toContain(token);
    expect((await store.list()).map((t) => t.kind)).toEqual(['read']);
    expect(await store.revoke(token)).toBe(true);
  });

  it('are unknown to a verifier of other kinds (the gateway accepts public and secret only)', async () => {
    const store = new FileTokenStore(mkdtempSync(join(tmpdir(), 'tally-tok-')));
    const read = (await store.create('shop', 'read')).token;
    const pub = (await store.create('shop', 'public')).token;
    const ingest = new TokenVerifier(store, { refreshMs: 60_000, kinds: ['public', 'secret'] });
    const dashboard = new TokenVerifier(store, { refreshMs: 60_000, kinds: ['read'] });
    await ingest.refresh();
    await dashboard.refresh();
    expect(ingest.verify(read)).toBeNull();
    expect(await ingest.verifyFresh(read)).toBeNull();
    expect(ingest.verify(pub)?.kind).toBe('public');
    expect(dashboard.verify(read)?.kind).toBe('read');
    expect(dashboard.verify(pub)).toBeNull();
  });
});

describe('TokenVerifier.verifyFresh', () => {
  /** A file store that counts how often the verifier asks for its version. */
  function countingStore() {
    const store = new FileTokenStore(mkdtempSync(join(tmpdir(), 'tally-tokens-')));
    let versionChecks = 0;
    const source = {
      version: () => {
        versionChecks++;
        return store.version();
      },
      list: () => store.list(),
    };
    return { store, source, checks: () => versionChecks };
  }

  it('accepts a token created after the last refresh on its first use', async () => {
    const { store, source } = countingStore();
    const verifier = new TokenVerifier(source, { refreshMs: 3_600_000 });
    await verifier.refresh();
    const { token } = await store.create('p', 'public');
    expect(verifier.verify(token)).toBeNull(); // not loaded yet
    expect((await verifier.verifyFresh(token))?.project_id).toBe('p');
  });

  it('checks the store at most once per missRefreshMs, however many unknown tokens come', async () => {
    const { source, checks } = countingStore();
    const verifier = new TokenVerifier(source, { refreshMs: 3_600_000, missRefreshMs: 60_000 });
    await verifier.refresh();
    const before = checks();
    const unknown = Array.from({ length: 50 }, () => generateToken('public'));
    const answers = await Promise.all(unknown.map((t) => verifier.verifyFresh(t)));
    expect(answers.every((a) => a === null)).toBe(true);
    expect(await verifier.verifyFresh(generateToken('secret'))).toBeNull();
    expect(checks() - before).toBe(1);
    // Malformed tokens never reach the store.
    expect(await verifier.verifyFresh('pub_short')).toBeNull();
    expect(checks() - before).toBe(1);
  });
});

describe('allowed origins', () => {
  it('are normalized, stored beside the tokens, kept across token changes, and cleared by an empty list', async () => {
    const store = new FileTokenStore(mkdtempSync(join(tmpdir(), 'tally-tok-')));
    const before = await store.version();
    const access = await store.setAllowedOrigins('shop', [
      'https://Shop.Example/',
      'https://shop.example:443',
      'http://localhost:3000',
    ]);
    expect(access.allowed_origins).toEqual(['https://shop.example', 'http://localhost:3000']);
    expect(await store.version()).not.toBe(before); // verifiers reload
    const { info } = await store.create('shop', 'public');
    await store.revoke(info.id);
    expect((await store.projects()).map((p) => p.allowed_origins)).toEqual([
      ['https://shop.example', 'http://localhost:3000'],
    ]);
    await store.setAllowedOrigins('shop', []);
    expect((await store.projects())[0]?.allowed_origins).toEqual([]);
  });

  it('refuse what is not an origin', async () => {
    const store = new FileTokenStore(mkdtempSync(join(tmpdir(), 'tally-tok-')));
    for (const bad of [
      'shop.example',
      'https://shop.example/path',
      '*',
      'ftp://shop.example',
      'https://shop.example/?q',
    ])
      await expect(store.setAllowedOrigins('shop', [bad]), bad).rejects.toThrow(/not an origin/);
    expect(normalizeOrigin(' https://xn--bcher-kva.example ')).toBe('https://xn--bcher-kva.example');
  });
});
