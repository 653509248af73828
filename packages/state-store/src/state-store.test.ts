// Users, sessions, sign-in links and share links on the LMDB store (the same store the CLI writes beside a
// running dashboard): secrets and passwords stored only hashed, one-time links, expiry, revocation.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { stateStoreConformance } from './conformance.ts';
import { LmdbStateStore } from './lmdb-store.ts';
import { isEmbedOrigin, ShareLinks } from './share-links.ts';
import { Sessions, Users } from './users.ts';

const dir = mkdtempSync(join(tmpdir(), 'tally-dash-store-'));
const store = new LmdbStateStore(dir);
afterAll(() => store.close());
stateStoreConformance('LMDB', () => new LmdbStateStore(join(dir, 'conformance')), '');
const fileText = () => readFileSync(join(dir, 'dashboard.mdb')).toString('latin1');

describe('users', () => {
  const users = new Users(store);
  it('set their password once through the sign-in link, stored as a scrypt hash', async () => {
    await users.add('Ada@Example.com', ['shop']);
    const link = await users.createSignInLink('ada@example.com');
    expect(await users.usePasswordLink(link, 'correct horse battery')).toMatchObject({
      email: 'ada@example.com',
    });
    expect(await users.usePasswordLink(link, 'another password!')).toBeNull(); // once
    expect(await users.authenticate('ADA@example.com', 'correct horse battery')).toMatchObject({
      projects: ['shop'],
    });
    expect(await users.authenticate('ada@example.com', 'wrong password!!')).toBeNull();
    expect(await users.authenticate('nobody@example.com', 'correct horse battery')).toBeNull();
    const stored = await users.get('ada@example.com');
    expect(stored?.password_hash).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(fileText()).not.toContain('correct horse battery');
    expect(fileText()).not.toContain(link);
    expect((await users.list()).map((u) => [u.email, u.has_password])).toEqual([['ada@example.com', true]]);
  });

  it('refuse short passwords, duplicate emails and no project', async () => {
    await expect(users.setPassword('ada@example.com', 'short')).rejects.toThrow(/10 characters/);
    await expect(users.add('ada@example.com', ['x'])).rejects.toThrow(/exists/);
    await expect(users.add('bob@example.com', [])).rejects.toThrow(/at least one project/);
  });

  it('are added with their password, or not at all when it is refused', async () => {
    await expect(users.add('cy@example.com', ['shop'], 'short')).rejects.toThrow(/10 characters/);
    expect(await users.get('cy@example.com')).toBeNull();
    await users.add('cy@example.com', ['shop'], 'long enough password');
    expect(await users.authenticate('cy@example.com', 'long enough password')).not.toBeNull();
    // A listing shows neither the hashes nor the session stamp.
    expect(Object.keys((await users.list()).find((u) => u.email === 'cy@example.com') ?? {}).sort()).toEqual([
      'created_at',
      'email',
      'has_password',
      'projects',
      'roles',
    ]);
    expect((await users.list()).find((u) => u.email === 'cy@example.com')?.roles).toEqual({ shop: 'owner' });
  });
});

describe('sessions', () => {
  const sessions = new Sessions(store);
  it('are random tokens stored by their hash, ended on sign-out', async () => {
    const token = await sessions.create('ada@example.com');
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await sessions.find(token))?.email).toBe('ada@example.com');
    expect(fileText()).not.toContain(token);
    await sessions.end(token);
    expect(await sessions.find(token)).toBeNull();
    expect(await sessions.find('x'.repeat(43))).toBeNull();
  });
});

describe('share links', () => {
  const shares = new ShareLinks(store);
  it('open with their token, or with a grant after the password; revoking ends both', async () => {
    const open = await shares.create('shop', { name: 'public' });
    expect((await shares.findByToken(open.token))?.project).toBe('shop');
    const locked = await shares.create('shop', {
      password: 'letmein please',
      include_revenue: true,
      embed_origins: ['https://blog.example', 'http://localhost:8080', 'https://blog.example'],
    });
    expect(locked.share.embed_origins).toEqual(['https://blog.example', 'http://localhost:8080']);
    expect(await shares.unlock(locked.token, 'wrong')).toBeNull();
    const grant = await shares.unlock(locked.token, 'letmein please');
    expect(grant?.grant).toMatch(/^shg_/);
    expect((await shares.findByGrant(grant?.grant ?? ''))?.id).toBe(locked.share.id);
    expect(fileText()).not.toContain(open.token);
    expect(fileText()).not.toContain(grant?.grant);
    expect(await shares.revoke('other', locked.share.id)).toBe(false);
    expect(await shares.revoke('shop', locked.share.id)).toBe(true);
    expect(await shares.findByToken(locked.token)).toBeNull();
    expect(await shares.findByGrant(grant?.grant ?? '')).toBeNull();
  });

  it('refuse an embedding origin that is not exactly an origin (it would go into the CSP as it is)', async () => {
    for (const origin of [
      'https://blog.example;script-src',
      'https://blog.example,https://evil.example',
      "https://blog.example'",
      'https://*.example',
      'https://a$b.example',
      'https://Blog.example',
      'https://blog.example/',
      'https://blog.example:443',
      'https://user@blog.example',
      'ftp://blog.example',
      'javascript://blog.example',
      'blog.example',
      '',
    ]) {
      expect(isEmbedOrigin(origin), origin).toBe(false);
      await expect(shares.create('shop', { embed_origins: [origin] }), origin).rejects.toThrow(
        /embed_origins must be origins such as https:\/\/blog\.example/,
      );
    }
    for (const origin of [
      'https://blog.example',
      'http://localhost:8080',
      'http://[::1]:3000',
      'http://10.0.0.1',
    ]) {
      expect(isEmbedOrigin(origin), origin).toBe(true);
    }
  });

  it('expire what has a lifetime', async () => {
    await store.put('sessions', 'short', { email: 'x' }, 1);
    await vi.waitFor(async () => expect(await store.get('sessions', 'short')).toBeNull(), { timeout: 5000 });
  });
});
