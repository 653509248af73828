// `tally users add` and `tally users link` with SMTP configured: the link is printed as before and mailed
// to the user through a real SMTP server (Mailpit, read back through its API): subject, recipient, both
// parts carrying the printed link, and the mailed link sets the password once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { loadConfig } from '@tally/config';
import { LmdbStateStore, Users } from '@tally/state-store';
import { FileTokenStore } from '@tally/tokens';
import { afterAll, beforeAll, expect, inject, it, vi } from 'vitest';
import { runUsers } from '../packages/cli/src/users.ts';
import { uniqueAddress, waitForMessages } from './support/mailpit.ts';

const dir = mkdtempSync(join(tmpdir(), 'tally-users-mail-'));
const smtp = new URL(inject('mailpitSmtpUrl'));
const api = inject('mailpitUrl');
const config = loadConfig({
  TALLY_DATA_DIR: dir,
  DASHBOARD_PUBLIC_URL: 'https://tally.test',
  SMTP_HOST: smtp.hostname,
  SMTP_PORT: smtp.port,
  SMTP_SECURE: 'none',
  SMTP_FROM: 'Tally <tally@tally.test>',
});
beforeAll(async () => {
  const tokens = new FileTokenStore(dir);
  await tokens.create('shop', 'public');
  await tokens.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `tally users …` and returns what it printed. */
async function users(args: string[]): Promise<string> {
  const printed: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    printed.push(String(chunk));
    return true;
  });
  try {
    expect(await runUsers(config, args, parseArgs, Readable.from(['']))).toBe(0);
  } finally {
    spy.mockRestore();
  }
  return printed.join('');
}

it('prints the password link and mails it to the user; the mailed link works once', async () => {
  const to = uniqueAddress('cli-add');
  const printed = await users(['add', to, '--project', 'shop', '--role', 'viewer']);
  const link = /https:\/\/tally\.test\/set-password#token=\S+/.exec(printed)?.[0];
  expect(link).toBeDefined();
  expect(printed).toContain(`The link was also mailed to ${to}.`);
  const [message] = await waitForMessages(api, to);
  expect(message?.Subject).toBe('Set your Tally password');
  expect(message?.To.map((a) => a.Address)).toEqual([to]);
  expect(message?.Text).toContain(link);
  expect(message?.HTML).toContain(`<a href="${link}">`);
  // The link works: its token sets the password once.
  const token = new URL(link ?? '').hash.replace('#token=', '');
  const store = new LmdbStateStore(dir);
  try {
    const accounts = new Users(store);
    expect(await accounts.usePasswordLink(token, 'a long password')).toMatchObject({ email: to });
    expect(await accounts.usePasswordLink(token, 'another password')).toBeNull();
  } finally {
    await store.close();
  }

  // `users link` (a forgotten password) mails a new one.
  const again = await users(['link', to]);
  const second = /https:\/\/tally\.test\/set-password#token=\S+/.exec(again)?.[0];
  const messages = await waitForMessages(api, to, 2);
  expect(messages[0]?.Text).toContain(second);
});
