// Invitations and "forgot password" over HTTP, with mail through a real SMTP server (Mailpit, read back
// through its API): an owner invites an email, the mail carries a link to this dashboard's /invite page
// that is accepted once (a new account sets its password, an existing one proves it with its own), refused
// when reused, revoked or expired (the invitations' clock moved 7 days on); admins invite all but owners,
// viewers nobody; without SMTP the inviter gets the link instead. "Forgot password" answers alike for any
// email, mails a working set-password link at most once per 5 minutes, and says when mail is not set up.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@tally/config';
import { type Mailer, openMailer } from '@tally/mail';
import {
  AlertStore,
  INVITATION_TTL_MS,
  Invitations,
  LmdbStateStore,
  ProjectStore,
  ReportSubscriptions,
  Sessions,
  ShareLinks,
  SignInFailures,
  Users,
} from '@tally/state-store';
import { FileTokenStore, TokenVerifier } from '@tally/tokens';
import { migrate, type Warehouse } from '@tally/warehouse';
import { openChdbWarehouse } from '@tally/warehouse/chdb';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildDashboard } from '../services/dashboard/src/dashboard.ts';
import { messagesTo, uniqueAddress, waitForMessages } from './support/mailpit.ts';

const PROJECT = 'team-site';
const dir = mkdtempSync(join(tmpdir(), 'tally-invitations-'));
const smtp = new URL(inject('mailpitSmtpUrl'));
const mailpit = inject('mailpitUrl');
let now = Date.now();
let warehouse: Warehouse;
let store: LmdbStateStore;
let users: Users;
let sessions: Sessions;

interface Running {
  app: FastifyInstance;
  url: string;
  mailer: Mailer;
}
const running: Running[] = [];

/** A dashboard listening on 127.0.0.1, with SMTP (Mailpit) or without; no DASHBOARD_PUBLIC_URL. */
async function start(withSmtp: boolean): Promise<Running> {
  const smtpSettings = withSmtp
    ? {
        SMTP_HOST: smtp.hostname,
        SMTP_PORT: smtp.port,
        SMTP_SECURE: 'none',
        SMTP_FROM: 'Tally <tally@tally.test>',
      }
    : {};
  const config = loadConfig({ TALLY_DATA_DIR: dir, ...smtpSettings });
  const tokens = new FileTokenStore(dir);
  const readKeys = new TokenVerifier(tokens, { refreshMs: 60_000, kinds: ['read'] });
  await readKeys.refresh();
  const mailer = openMailer(config);
  let url: string | undefined;
  const app = await buildDashboard({
    config,
    warehouse,
    users,
    invitations: new Invitations(store, users, () => now),
    alerts: new AlertStore(store),
    mailer,
    listeningUrl: () => url,
    sessions,
    shares: new ShareLinks(store),
    projects: new ProjectStore(store),
    reportSubscriptions: new ReportSubscriptions(store),
    readKeys,
    tokens,
    attemptLimit: { max: 1000, timeWindow: 60_000 },
    signInFailures: new SignInFailures(store, { now: () => now }),
    webRoot: join(dir, 'no-web'),
  });
  url = await app.listen({ port: 0, host: '127.0.0.1' });
  const started = { app, url, mailer };
  running.push(started);
  return started;
}

beforeAll(async () => {
  warehouse = await openChdbWarehouse({ dataDir: join(dir, 'warehouse'), database: 'tally' });
  await migrate(warehouse);
  store = new LmdbStateStore(dir);
  users = new Users(store);
  sessions = new Sessions(store);
  await users.add('owner@example.com', [PROJECT], 'owner password!', 'owner');
  await users.add('admin@example.com', [PROJECT], 'admin password!', 'admin');
  await users.add('viewer@example.com', [PROJECT], 'viewer password!', 'viewer');
});
afterAll(async () => {
  for (const { app, mailer } of running) {
    await app.close();
    mailer.close();
  }
  await store?.close();
  await warehouse?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A JSON request to the dashboard, as its own page sends it (same Origin), signed in as `who` when given. */
async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  who?: string,
): Promise<{ status: number; json: Record<string, unknown>; cookie: string | null }> {
  const headers: Record<string, string> = { origin: base };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (who) headers.cookie = `tally_session=${await sessions.create(who)}`;
  const response = await fetch(`${base}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    json: text ? (JSON.parse(text) as Record<string, unknown>) : {},
    cookie: response.headers.get('set-cookie'),
  };
}

const tokenOf = (link: string) => new URL(link).hash.replace('#token=', '');

describe('with SMTP configured', () => {
  let base: string;
  beforeAll(async () => {
    base = (await start(true)).url;
  });

  it('mails an invitation whose link is accepted once, signing the new member in with the invited role', async () => {
    const to = uniqueAddress('invitee');
    const created = await call(
      base,
      'POST',
      `/api/v1/projects/${PROJECT}/invitations`,
      { email: to, role: 'viewer' },
      'owner@example.com',
    );
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      emailed: true,
      link: null,
      invitation: { email: to, role: 'viewer', invited_by: 'owner@example.com' },
    });
    const [message] = await waitForMessages(mailpit, to);
    expect(message?.Subject).toBe(`owner@example.com invited you to ${PROJECT} on Tally`);
    expect(message?.To.map((a) => a.Address)).toEqual([to]);
    const link = new RegExp(`${base}/invite#token=inv_[A-Za-z0-9_-]{43}`).exec(message?.Text ?? '')?.[0];
    expect(link, message?.Text).toBeDefined();
    expect(message?.HTML).toContain(`<a href="${link}">`);
    expect(message?.Text).toContain('as a viewer');
    const listed = await call(
      base,
      'GET',
      `/api/v1/projects/${PROJECT}/invitations`,
      undefined,
      'admin@example.com',
    );
    expect((listed.json.invitations as { email: string }[]).map((i) => i.email)).toContain(to);

    const token = tokenOf(link as string);
    const view = await call(base, 'POST', '/api/v1/invitation', { token });
    expect(view.json).toMatchObject({ project: PROJECT, email: to, role: 'viewer', account_exists: false });
    expect((await call(base, 'POST', '/api/v1/invitation/accept', { token, password: 'short' })).status).toBe(
      400,
    );
    const accepted = await call(base, 'POST', '/api/v1/invitation/accept', {
      token,
      password: 'invitee password',
    });
    expect(accepted.status).toBe(200);
    expect(accepted.json).toEqual({
      user: { email: to },
      projects: [PROJECT],
      roles: { [PROJECT]: 'viewer' },
    });
    // The answer signed the browser in: its cookie opens the session.
    const cookie = /tally_session=[^;]+/.exec(accepted.cookie ?? '')?.[0] as string;
    const session = await fetch(`${base}/api/v1/session`, { headers: { cookie } });
    expect(await session.json()).toMatchObject({ roles: { [PROJECT]: 'viewer' } });
    // Used: the link works no more, and is no longer pending.
    const again = await call(base, 'POST', '/api/v1/invitation/accept', {
      token,
      password: 'invitee password',
    });
    expect(again.status).toBe(401);
    expect(again.json.error).toMatch(/unknown, used, revoked or expired/);
    expect((await call(base, 'POST', '/api/v1/invitation', { token })).status).toBe(401);
    const after = await call(
      base,
      'GET',
      `/api/v1/projects/${PROJECT}/invitations`,
      undefined,
      'owner@example.com',
    );
    expect((after.json.invitations as { email: string }[]).map((i) => i.email)).not.toContain(to);
  });

  it('adds the project to an existing account only with its own password; a wrong one leaves the link working', async () => {
    const to = uniqueAddress('existing');
    await users.add(to, ['elsewhere'], 'existing password', 'owner');
    await call(
      base,
      'POST',
      `/api/v1/projects/${PROJECT}/invitations`,
      { email: to, role: 'admin' },
      'admin@example.com',
    );
    const [message] = await waitForMessages(mailpit, to);
    const token = /#token=(inv_[A-Za-z0-9_-]{43})/.exec(message?.Text ?? '')?.[1] as string;
    expect((await call(base, 'POST', '/api/v1/invitation', { token })).json.account_exists).toBe(true);
    const wrong = await call(base, 'POST', '/api/v1/invitation/accept', {
      token,
      password: 'not the password',
    });
    expect(wrong.status).toBe(401);
    expect(wrong.json.error).toBe('Invalid email or password');
    // As at sign-in, this address waits before trying this account's password again.
    const soon = await call(base, 'POST', '/api/v1/invitation/accept', {
      token,
      password: 'existing password',
    });
    expect(soon.status).toBe(429);
    now += 1_000;
    const right = await call(base, 'POST', '/api/v1/invitation/accept', {
      token,
      password: 'existing password',
    });
    expect(right.json).toMatchObject({ roles: { elsewhere: 'owner', [PROJECT]: 'admin' } });
  });

  it('refuses an expired or revoked invitation, and lets only owners invite owners and viewers nobody', async () => {
    const invite = async (email: string, role: string, who: string) =>
      call(base, 'POST', `/api/v1/projects/${PROJECT}/invitations`, { email, role }, who);
    expect((await invite(uniqueAddress('o'), 'owner', 'admin@example.com')).status).toBe(403);
    expect((await invite(uniqueAddress('v'), 'viewer', 'viewer@example.com')).status).toBe(403);
    expect((await invite('viewer@example.com', 'admin', 'owner@example.com')).json.message).toMatch(
      /member .* already/,
    );
    expect((await invite('not an email', 'viewer', 'owner@example.com')).status).toBe(400);

    const late = uniqueAddress('late');
    expect((await invite(late, 'owner', 'owner@example.com')).status).toBe(201);
    const [message] = await waitForMessages(mailpit, late);
    const token = /#token=(inv_[A-Za-z0-9_-]{43})/.exec(message?.Text ?? '')?.[1] as string;
    now += INVITATION_TTL_MS;
    try {
      expect((await call(base, 'POST', '/api/v1/invitation', { token })).status).toBe(401);
      expect(
        (await call(base, 'POST', '/api/v1/invitation/accept', { token, password: 'late password!' })).status,
      ).toBe(401);
      expect(await users.get(late)).toBeNull();
    } finally {
      now -= INVITATION_TTL_MS;
    }

    const revoked = uniqueAddress('revoked');
    const created = await invite(revoked, 'viewer', 'owner@example.com');
    const id = (created.json.invitation as { id: string }).id;
    expect(
      (
        await call(
          base,
          'DELETE',
          `/api/v1/projects/${PROJECT}/invitations/${id}`,
          undefined,
          'viewer@example.com',
        )
      ).status,
    ).toBe(403);
    expect(
      (
        await call(
          base,
          'DELETE',
          `/api/v1/projects/${PROJECT}/invitations/${id}`,
          undefined,
          'admin@example.com',
        )
      ).status,
    ).toBe(204);
    expect(
      (
        await call(
          base,
          'DELETE',
          `/api/v1/projects/${PROJECT}/invitations/${id}`,
          undefined,
          'admin@example.com',
        )
      ).status,
    ).toBe(404);
    const [mailed] = await waitForMessages(mailpit, revoked);
    const revokedToken = /#token=(inv_[A-Za-z0-9_-]{43})/.exec(mailed?.Text ?? '')?.[1] as string;
    expect(
      (
        await call(base, 'POST', '/api/v1/invitation/accept', {
          token: revokedToken,
          password: 'revoked password',
        })
      ).status,
    ).toBe(401);
  });

  it('mails a working set-password link for a forgotten password, once per 5 minutes, and answers alike for unknown emails', async () => {
    const to = uniqueAddress('forgot');
    await users.add(to, [PROJECT], 'old password!!', 'viewer');
    const asked = await call(base, 'POST', '/api/v1/password-reset', { email: to.toUpperCase() });
    expect(asked).toMatchObject({ status: 202, json: { emailed: true } });
    const [message] = await waitForMessages(mailpit, to);
    expect(message?.Subject).toBe('Set your Tally password');
    const link = new RegExp(`${base}/set-password#token=link_[A-Za-z0-9_-]{43}`).exec(
      message?.Text ?? '',
    )?.[0];
    expect(link, message?.Text).toBeDefined();
    // Asked again at once: the same answer, no second mail.
    expect(await call(base, 'POST', '/api/v1/password-reset', { email: to })).toMatchObject({
      status: 202,
      json: { emailed: true },
    });
    const unknown = uniqueAddress('nobody');
    expect(await call(base, 'POST', '/api/v1/password-reset', { email: unknown })).toMatchObject({
      status: 202,
      json: { emailed: true },
    });
    // The link sets the new password (signing in), once.
    const token = tokenOf(link as string);
    const set = await call(base, 'POST', '/api/v1/password', { token, password: 'new password!!' });
    expect(set.status).toBe(200);
    expect(await users.authenticate(to, 'new password!!')).not.toBeNull();
    expect(await users.authenticate(to, 'old password!!')).toBeNull();
    // Whatever else was sent has arrived by now (the set-password answer came after both reset answers).
    expect(await messagesTo(mailpit, to)).toHaveLength(1);
    expect(await messagesTo(mailpit, unknown)).toHaveLength(0);
  });
});

describe('without SMTP', () => {
  it('gives the inviter the link to pass on, and says a forgotten password cannot be mailed', async () => {
    const { url: base } = await start(false);
    const to = uniqueAddress('unmailed');
    const created = await call(
      base,
      'POST',
      `/api/v1/projects/${PROJECT}/invitations`,
      { email: to, role: 'admin' },
      'owner@example.com',
    );
    expect(created.status).toBe(201);
    expect(created.json.emailed).toBe(false);
    const link = created.json.link as string;
    expect(link).toMatch(new RegExp(`^${base}/invite#token=inv_`));
    const accepted = await call(base, 'POST', '/api/v1/invitation/accept', {
      token: tokenOf(link),
      password: 'unmailed password',
    });
    expect(accepted.json).toMatchObject({ roles: { [PROJECT]: 'admin' } });
    expect(await call(base, 'POST', '/api/v1/password-reset', { email: to })).toMatchObject({
      status: 202,
      json: { emailed: false },
    });
    expect(await messagesTo(mailpit, to)).toHaveLength(0);
  });
});
