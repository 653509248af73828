// `tally users add` on an LMDB store in a temporary directory: a user is added only when everything given
// is valid (a refused password, email or project adds nobody), and with --password-stdin the password is set.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { loadConfig } from '@tally/config';
import { LmdbStateStore, Users } from '@tally/state-store';
import { FileTokenStore } from '@tally/tokens';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runUsers } from './users.ts';

const dir = mkdtempSync(join(tmpdir(), 'tally-cli-users-'));
// This directory's store, whatever the environment says (no REDIS_URL).
const config = loadConfig({ TALLY_DATA_DIR: dir });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const stored = async () => {
  const store = new LmdbStateStore(dir);
  try {
    return (await new Users(store).list()).map((u) => [u.email, u.has_password]);
  } finally {
    await store.close();
  }
};
const users = (args: string[], stdin = '') => runUsers(config, args, parseArgs, Readable.from([stdin]));

describe('tally users add', () => {
  vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  // A project is made by its first token: shop has one, nothing else does.
  beforeAll(async () => {
    const tokens = new FileTokenStore(dir);
    await tokens.create('shop', 'public');
    await tokens.close();
  });

  it('refuses a project no token was ever made for, in add and grant, and adds or grants nothing', async () => {
    await expect(users(['add', 'typo@example.com', '--project', 'shpo'])).rejects.toThrow(
      /unknown project "shpo": no token was ever made for it/,
    );
    await expect(
      users(['add', 'typo@example.com', '--project', 'shop', '--project', 'nope']),
    ).rejects.toThrow(/unknown project "nope"/);
    expect(await stored()).toEqual([]);
    expect(await users(['add', 'grantee@example.com', '--project', 'shop'])).toBe(0);
    await expect(users(['grant', 'grantee@example.com', '--project', 'nope'])).rejects.toThrow(
      /unknown project "nope"/,
    );
    const store = new LmdbStateStore(dir);
    try {
      expect(
        (await new Users(store).list()).find((u) => u.email === 'grantee@example.com')?.projects,
      ).toEqual(['shop']);
      await new Users(store).remove('grantee@example.com');
    } finally {
      await store.close();
    }
  });

  it('adds no user when the password, the email or the projects are refused', async () => {
    await expect(
      users(['add', 'short@example.com', '--project', 'shop', '--password-stdin'], 'short\n'),
    ).rejects.toThrow(/at least 10 characters/);
    await expect(users(['add', 'not-an-email', '--project', 'shop'])).rejects.toThrow(/not an email/);
    await expect(users(['add', 'bad@example.com', '--project', 'no/such'])).rejects.toThrow();
    await expect(users(['add', 'none@example.com'])).rejects.toThrow(/at least one project/);
    expect(await stored()).toEqual([]);
  });

  it('adds a user with the password read from stdin, or without one (and a link)', async () => {
    expect(
      await users(['add', 'ci@example.com', '--all-projects', '--password-stdin'], 'a long password\n'),
    ).toBe(0);
    expect(await users(['add', 'you@example.com', '--project', 'shop'])).toBe(0);
    expect(await stored()).toEqual([
      ['ci@example.com', true],
      ['you@example.com', false],
    ]);
  });

  it('gives the role of --role (owner by default), changes it with users role, and keeps a last owner', async () => {
    const roles = async () => {
      const store = new LmdbStateStore(dir);
      try {
        return Object.fromEntries((await new Users(store).members('shop')).map((m) => [m.email, m.role]));
      } finally {
        await store.close();
      }
    };
    expect(await users(['add', 'owner@example.com', '--project', 'shop'])).toBe(0);
    expect(await users(['add', 'viewer@example.com', '--project', 'shop', '--role', 'viewer'])).toBe(0);
    await expect(users(['add', 'x@example.com', '--project', 'shop', '--role', 'root'])).rejects.toThrow(
      /--role is one of owner, admin, viewer/,
    );
    expect(await roles()).toMatchObject({ 'owner@example.com': 'owner', 'viewer@example.com': 'viewer' });
    expect(await users(['role', 'viewer@example.com', '--project', 'shop', '--role', 'admin'])).toBe(0);
    expect((await roles())['viewer@example.com']).toBe('admin');
    await expect(
      users(['role', 'viewer@example.com', '--project', 'nope', '--role', 'admin']),
    ).rejects.toThrow(/unknown project "nope"/);
    await expect(users(['role', 'viewer@example.com', '--project', 'shop'])).rejects.toThrow(
      /needs one --project <id> and --role/,
    );
    // ci@ (every project) is an owner of shop too; without it, you@ (added above) and owner@ are the owners:
    // demoting both would leave none, refused.
    expect(await users(['remove', 'ci@example.com'])).toBe(0);
    expect(await users(['role', 'you@example.com', '--project', 'shop', '--role', 'viewer'])).toBe(0);
    await expect(
      users(['role', 'owner@example.com', '--project', 'shop', '--role', 'viewer']),
    ).rejects.toThrow(/last owner of shop/);
    expect((await roles())['owner@example.com']).toBe('owner');
  });
});
