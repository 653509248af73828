// Members, invitations and "forgot password" in real headless Chromium against npm start's process with an
// SMTP server (Mailpit, read back through its API): the owner invites an email from Settings, the mailed
// link opens the invitation page in a browser that was never signed in, which sets the password and lands on
// the project; the viewer's Settings hold only their own email reports and no control that would be refused;
// the owner changes the new member's role in the members table; the used link is refused; a forgotten
// password is asked for from the sign-in page and its mailed link works. Screenshots at 1440 and 390 px,
// light and dark, go to test-output/dashboard-web/ to be looked at.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { FileTokenStore } from '@tally/tokens';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildWebIfStale } from '../services/dashboard/web/scripts/build.mjs';
import { launchChromium, watchedPage } from './support/browser.ts';
import { uniqueAddress, waitForMessages } from './support/mailpit.ts';
import { ROOT, tally, tempDataDir } from './support/processes.ts';
import { pipelineEnv, startTallyProcess, type TallyProcess } from './support/tally-process.ts';

const SHOTS = join(ROOT, 'test-output', 'dashboard-web');
const PROJECT = 'team-site';
const OWNER = uniqueAddress('owner');
const PASSWORD = 'a long enough password';
const POLL = { timeout: 20_000, interval: 100 };
const smtp = new URL(inject('mailpitSmtpUrl'));
const mailpit = inject('mailpitUrl');

let browser: Browser;
let running: TallyProcess;
let dashboard: string;
let ownerState: Awaited<ReturnType<BrowserContext['storageState']>>;
const contexts: BrowserContext[] = [];
const consoleErrors: string[] = [];

const newPage = (
  colorScheme: 'light' | 'dark',
  width: number,
  storageState?: Awaited<ReturnType<BrowserContext['storageState']>>,
): Promise<Page> =>
  watchedPage(browser, { contexts, errors: consoleErrors }, colorScheme, width, storageState);

const tokenIn = (text: string | undefined, kind: 'invite' | 'set-password') =>
  new RegExp(`${dashboard}/${kind}#token=((?:inv|link)_[A-Za-z0-9_-]{43})`).exec(text ?? '')?.[1];

/** The role of `email` in the project, as the members API answers it to the owner. */
async function roleOf(page: Page, email: string): Promise<string | undefined> {
  const members = await page.evaluate(
    async (url) => (await fetch(url)).json(),
    `${dashboard}/api/v1/projects/${PROJECT}/members`,
  );
  return (members as { members: { email: string; role: string }[] }).members.find((m) => m.email === email)
    ?.role;
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  await buildWebIfStale();
  const dataDir = tempDataDir();
  const store = new FileTokenStore(dataDir);
  await store.create(PROJECT, 'public');
  const env = pipelineEnv({
    TALLY_DATA_DIR: dataDir,
    SMTP_HOST: smtp.hostname,
    SMTP_PORT: smtp.port,
    SMTP_SECURE: 'none',
    SMTP_FROM: 'Tally <tally@tally.test>',
  });
  const printed = await tally(['users', 'add', OWNER, '--project', PROJECT, '--role', 'owner'], env);
  const signInToken = /set-password#token=(\S+)/.exec(printed)?.[1] as string;
  [browser, running] = await Promise.all([
    launchChromium(),
    startTallyProcess({
      TALLY_DATA_DIR: dataDir,
      SMTP_HOST: smtp.hostname,
      SMTP_PORT: smtp.port,
      SMTP_SECURE: 'none',
      SMTP_FROM: 'Tally <tally@tally.test>',
    }),
  ]);
  dashboard = running.endpoints.dashboardUrl as string;
  const page = await newPage('light', 1440);
  await page.goto(`${dashboard}/set-password#token=${signInToken}`);
  await page.getByLabel('New password').fill(PASSWORD);
  await page.getByLabel('Repeat it').fill(PASSWORD);
  await page.getByRole('button', { name: 'Set password and sign in' }).click();
  await page.waitForURL(`${dashboard}/**`, POLL);
  await page.getByText(PROJECT).first().waitFor(POLL);
  ownerState = await page.context().storageState();
});

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined);
  await browser?.close();
  await running?.stop('SIGTERM');
});

describe('members and invitations', () => {
  const invitee = uniqueAddress('viewer');
  let inviteToken: string | undefined;

  it('invites an email from Settings; the mail arrives with a link to the invitation page', async () => {
    const page = await newPage('light', 1440, ownerState);
    await page.goto(`${dashboard}/projects/${PROJECT}/settings`);
    const card = page.locator('section', { has: page.getByRole('heading', { name: 'Members' }) });
    await card.getByRole('cell', { name: `${OWNER} (you)` }).waitFor(POLL);
    await card.getByLabel('Invite by email').fill(invitee);
    await card.getByLabel('Role of the invitee').selectOption('viewer');
    await card.getByRole('button', { name: 'Invite' }).click();
    await card.getByText(`Invitation mailed to ${invitee}.`).waitFor(POLL);
    await card
      .getByRole('table', { name: 'Pending invitations' })
      .getByRole('cell', { name: invitee })
      .waitFor(POLL);
    for (const [scheme, width] of [
      ['light', 1440],
      ['dark', 1440],
      ['light', 390],
      ['dark', 390],
    ] as const) {
      const shot = scheme === 'light' && width === 1440 ? page : await newPage(scheme, width, ownerState);
      if (shot !== page) {
        await shot.goto(`${dashboard}/projects/${PROJECT}/settings`);
        await shot.getByRole('cell', { name: invitee }).waitFor(POLL);
      }
      await card.first().waitFor(POLL);
      const section = shot.locator('section', { has: shot.getByRole('heading', { name: 'Members' }) });
      await section.screenshot({ path: join(SHOTS, `members-${width}-${scheme}.png`) });
      // Nothing of the card runs past the page's width (a phone scrolls the tables inside it).
      expect(await shot.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
    }
    const [message] = await waitForMessages(mailpit, invitee);
    expect(message?.Subject).toBe(`${OWNER} invited you to ${PROJECT} on Tally`);
    inviteToken = tokenIn(message?.Text, 'invite');
    expect(inviteToken, message?.Text).toBeDefined();
  });

  it('accepts the invitation in a browser never signed in, landing on the project as a viewer without edit controls', async () => {
    const page = await newPage('dark', 390);
    await page.goto(`${dashboard}/invite#token=${inviteToken}`);
    await page
      .getByText(`${OWNER} invited ${invitee} to the project ${PROJECT} on Tally, as a viewer.`)
      .waitFor(POLL);
    expect(page.url()).toBe(`${dashboard}/invite`); // the token left the address bar
    await page.screenshot({ path: join(SHOTS, 'invite-390-dark.png') });
    await page.getByLabel('Choose a password').fill('viewer password 1');
    await page.getByLabel('Repeat it').fill('viewer password 1');
    await page.getByRole('button', { name: `Accept and open ${PROJECT}` }).click();
    await page.waitForURL(`${dashboard}/projects/${PROJECT}`, POLL);

    // The traffic view offers no note form to a viewer (the API would refuse it: 403); its chart is there.
    await page.locator('.chart-card .chart').first().waitFor(POLL);
    expect(await page.locator('.annotation-add').count()).toBe(0);
    const owner = await newPage('light', 1440, ownerState);
    await owner.goto(`${dashboard}/projects/${PROJECT}`);
    await owner.locator('.chart-card .annotation-add').waitFor({ ...POLL, state: 'attached' });
    await page.goto(`${dashboard}/projects/${PROJECT}/settings`);
    await page.getByText(`You are a viewer of ${PROJECT}`).waitFor(POLL);
    await page.getByRole('heading', { name: 'Email reports' }).waitFor(POLL);
    for (const hidden of ['Members', 'Share links', 'Time zone'])
      expect(await page.getByRole('heading', { name: hidden }).count(), hidden).toBe(0);
    await page.screenshot({ path: join(SHOTS, 'settings-viewer-390-dark.png'), fullPage: true });

    // Used: the same link in another fresh browser says so.
    const again = await newPage('light', 1440);
    await again.goto(`${dashboard}/invite#token=${inviteToken}`);
    await again.getByText('This invitation link is unknown, already used, revoked or expired').waitFor(POLL);
  });

  it("changes the new member's role in the members table", async () => {
    const page = await newPage('light', 1440, ownerState);
    await page.goto(`${dashboard}/projects/${PROJECT}/settings`);
    await page.getByLabel(`Role of ${invitee}`).selectOption('admin');
    await expect.poll(() => roleOf(page, invitee), POLL).toBe('admin');
  });
});

describe('forgot password', () => {
  it('is asked for from the sign-in page, and the mailed link sets a new password', async () => {
    const page = await newPage('light', 390);
    await page.goto(`${dashboard}/login`);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByLabel('Email').fill(OWNER);
    await page.getByRole('button', { name: 'Send me a link' }).click();
    await page
      .getByText(`If ${OWNER} has an account, a link that sets a new password is on its way`)
      .waitFor(POLL);
    await page.screenshot({ path: join(SHOTS, 'forgot-password-390-light.png') });
    const messages = await waitForMessages(mailpit, OWNER, 2);
    const token = tokenIn(messages[0]?.Text, 'set-password');
    expect(token).toBeDefined();
    await page.goto(`${dashboard}/set-password#token=${token}`);
    await page.getByLabel('New password').fill('a brand new password');
    await page.getByLabel('Repeat it').fill('a brand new password');
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.waitForURL(`${dashboard}/`, POLL);
    await page.getByText(PROJECT).first().waitFor(POLL);
  });
});

afterAll(() => {
  // The one expected console error: the used invitation link's 401.
  expect(consoleErrors.filter((e) => !/401/.test(e))).toEqual([]);
});
