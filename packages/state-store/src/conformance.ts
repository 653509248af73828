// The conformance suite every state-store backend runs (LMDB in state-store.test.ts, Redis in
// test/state-store-redis.test.ts): documents by collection, expiry, an atomic take and an atomic claim
// (a lease: one claimer of several wins), and listing that
// keeps collections apart; and what the dashboard keeps on them that must hold on each: a user's one valid
// sign-in link, sessions that end with a password change, and failed sign-ins counted per (address,
// account) pair and seen by every handle (replica); a project's annotations and saved segments, kept apart
// per project and seen by the CLI beside the server.
import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { INVITATION_TTL_MS, Invitations } from './invitations.ts';
import { isAnnotationDate, ProjectStore } from './projects.ts';
import { SIGN_IN_DELAY_CAP_MS, SignInFailures, signInDelayMs } from './sign-in-failures.ts';
import type { StateStore } from './state-store.ts';
import { type Role, roleOf, Sessions, type User, Users } from './users.ts';

export function stateStoreConformance(name: string, open: () => StateStore, namespace: string): void {
  describe(`state store conformance: ${name}`, () => {
    const c = (collection: string) => `${namespace}${collection}`;

    it('gets, lists and deletes documents per collection', async () => {
      const store = open();
      await store.put(c('a'), 'k1', { n: 1 });
      await store.put(c('a'), 'k2', { n: 2 });
      await store.put(c('ab'), 'k1', { n: 3 });
      await store.put(c('a:x'), 'k1', { n: 4 });
      expect(await store.get(c('a'), 'k1')).toEqual({ n: 1 });
      expect((await store.list<{ n: number }>(c('a'))).map((d) => d.n).sort()).toEqual([1, 2]);
      expect(await store.delete(c('a'), 'k1')).toBe(true);
      expect(await store.delete(c('a'), 'k1')).toBe(false);
      expect(await store.get(c('a'), 'k1')).toBeNull();
      expect((await store.list<{ n: number }>(c('a'))).map((d) => d.n)).toEqual([2]);
      await store.close();
    });

    it('forgets expired documents, in get and list', async () => {
      const store = open();
      await store.put(c('ttl'), 'short', { n: 1 }, 20);
      await store.put(c('ttl'), 'long', { n: 2 }, 60_000);
      await vi.waitFor(async () => expect(await store.get(c('ttl'), 'short')).toBeNull(), { timeout: 5000 });
      expect(await store.list(c('ttl'))).toEqual([{ n: 2 }]);
      await store.close();
    });

    it('gives a document to one taker only', async () => {
      const store = open();
      await store.put(c('once'), 'link', { email: 'x' }, 60_000);
      const taken = await Promise.all([store.take(c('once'), 'link'), store.take(c('once'), 'link')]);
      expect(taken.filter((t) => t !== null)).toEqual([{ email: 'x' }]);
      expect(await store.take(c('once'), 'missing')).toBeNull();
      await store.close();
    });

    it('gives a claim to one claimer only, across handles, and again once the claim expired', async () => {
      const store = open();
      const other = open();
      const claims = await Promise.all([
        store.claim(c('lease'), 'weekly', { by: 'a' }, 60_000),
        other.claim(c('lease'), 'weekly', { by: 'b' }, 60_000),
        store.claim(c('lease'), 'weekly', { by: 'c' }, 60_000),
        other.claim(c('lease'), 'weekly', { by: 'd' }, 60_000),
      ]);
      expect(claims.filter(Boolean)).toHaveLength(1);
      const winner = ['a', 'b', 'c', 'd'][claims.indexOf(true)];
      expect(await other.get(c('lease'), 'weekly')).toEqual({ by: winner });
      expect(await store.list(c('lease'))).toEqual([{ by: winner }]);
      // Another key is another lease.
      expect(await other.claim(c('lease'), 'monthly', { by: 'e' })).toBe(true);
      // An expired claim is free again; a deleted one too.
      expect(await store.claim(c('lease'), 'short', { by: 'f' }, 20)).toBe(true);
      expect(await other.claim(c('lease'), 'short', { by: 'g' }, 20)).toBe(false);
      await vi.waitFor(async () => expect(await store.get(c('lease'), 'short')).toBeNull(), {
        timeout: 5000,
      });
      expect(await other.claim(c('lease'), 'short', { by: 'h' }, 60_000)).toBe(true);
      expect(await store.get(c('lease'), 'short')).toEqual({ by: 'h' });
      expect(await store.delete(c('lease'), 'monthly')).toBe(true);
      expect(await store.claim(c('lease'), 'monthly', { by: 'i' })).toBe(true);
      await other.close();
      await store.close();
    });

    it('sees what another handle wrote (the CLI beside a running dashboard)', async () => {
      const reader = open();
      await reader.get(c('shared'), 'x'); // a read before the write
      const writer = open();
      await writer.put(c('shared'), 'x', { n: 1 });
      expect(await reader.get(c('shared'), 'x')).toEqual({ n: 1 });
      expect(await reader.list(c('shared'))).toEqual([{ n: 1 }]);
      await writer.close();
      await reader.close();
    });

    // Users and sessions live in fixed collections: each case has emails of its own.
    const email = (name: string) => `${name}-${randomUUID()}@example.com`;

    it('keeps one valid sign-in link per user: a new link revokes the older ones, using one revokes all', async () => {
      const store = open();
      const users = new Users(store);
      const ada = email('ada');
      await users.add(ada, ['shop']);
      const first = await users.createSignInLink(ada);
      const second = await users.createSignInLink(ada);
      expect(await users.usePasswordLink(first, 'first password!')).toBeNull();
      expect(await users.authenticate(ada, 'first password!')).toBeNull();
      const third = await users.createSignInLink(ada);
      expect(await users.usePasswordLink(second, 'second password')).toBeNull();
      expect(await users.usePasswordLink(third, 'third password!')).toMatchObject({ email: ada });
      expect(await users.usePasswordLink(third, 'fourth password')).toBeNull();
      expect(await users.authenticate(ada, 'third password!')).not.toBeNull();
      // Setting the password otherwise (the CLI) revokes the outstanding link too.
      const fifth = await users.createSignInLink(ada);
      await users.setPassword(ada, 'fifth password!');
      expect(await users.usePasswordLink(fifth, 'sixth password!')).toBeNull();
      expect(await users.authenticate(ada, 'fifth password!')).not.toBeNull();
      await store.close();
    });

    it("ends a user's sessions when the password changes, and only theirs", async () => {
      const store = open();
      const users = new Users(store);
      const sessions = new Sessions(store);
      const [ada, bob] = [email('ada'), email('bob')];
      await users.add(ada, ['shop'], 'ada password 1');
      await users.add(bob, ['shop'], 'bob password 1');
      const adaBefore = [await sessions.create(ada), await sessions.create(ada)];
      const bobSession = await sessions.create(bob);
      for (const token of adaBefore) expect((await sessions.find(token))?.email).toBe(ada);
      // Through a sign-in link (a reset), on another handle: another replica sees it at once.
      const link = await users.createSignInLink(ada);
      const other = open();
      expect(await new Users(other).usePasswordLink(link, 'ada password 2')).not.toBeNull();
      for (const token of adaBefore) expect(await sessions.find(token)).toBeNull();
      expect((await sessions.find(bobSession))?.email).toBe(bob);
      const adaAfter = await sessions.create(ada);
      expect((await sessions.find(adaAfter))?.email).toBe(ada);
      // And through setPassword.
      await users.setPassword(ada, 'ada password 3');
      expect(await sessions.find(adaAfter)).toBeNull();
      expect((await sessions.find(bobSession))?.email).toBe(bob);
      await other.close();
      await store.close();
    });

    it('does not bring back the sessions or link of a removed user added again', async () => {
      const store = open();
      const users = new Users(store);
      const sessions = new Sessions(store);
      const ada = email('ada');
      await users.add(ada, ['shop'], 'ada password 1');
      const session = await sessions.create(ada);
      const link = await users.createSignInLink(ada);
      expect(await users.remove(ada)).toBe(true);
      expect(await sessions.find(session)).toBeNull();
      await users.add(ada, ['shop']);
      expect(await sessions.find(session)).toBeNull();
      expect(await users.usePasswordLink(link, 'ada password 2')).toBeNull();
      await store.close();
    });

    it('gives each member a role per project, keeps a last owner, and reads users stored before roles as owners', async () => {
      const store = open();
      const users = new Users(store);
      const project = `p${randomUUID().slice(0, 8)}`;
      const [ada, bob, cy] = [email('ada'), email('bob'), email('cy')];
      await users.add(ada, [project]);
      await users.add(bob, [project], undefined, 'viewer');
      // Stored as a user was before roles existed: projects only.
      await store.put('users', cy, {
        email: cy,
        password_hash: null,
        projects: [project],
        created_at: new Date().toISOString(),
      });
      const roles = async () =>
        Object.fromEntries((await users.members(project)).map((m) => [m.email, m.role]));
      expect(await roles()).toMatchObject({ [ada]: 'owner', [bob]: 'viewer', [cy]: 'owner' });
      await users.setRole(cy, project, 'admin');
      // ada is now the last owner: neither demoted nor removed.
      await expect(users.setRole(ada, project, 'admin')).rejects.toThrow(/last owner/);
      await expect(users.removeMember(ada, project)).rejects.toThrow(/last owner/);
      await users.setRole(bob, project, 'owner');
      // Another handle (a replica) sees the change at once.
      const other = open();
      expect(roleOf((await new Users(other).get(bob)) as User, project)).toBe('owner');
      await other.close();
      await users.setRole(ada, project, 'viewer');
      expect(await users.removeMember(ada, project)).toBe(true);
      expect(await users.removeMember(ada, project)).toBe(false);
      expect(await roles()).toMatchObject({ [bob]: 'owner', [cy]: 'admin' });
      expect(Object.keys(await roles())).not.toContain(ada);
      await expect(users.setRole(ada, project, 'viewer')).rejects.toThrow(/not a member/);
      await expect(users.setRole(bob, project, 'root' as Role)).rejects.toThrow(/owner, admin, viewer/);
      // A project granted later gets the role given then; one already held keeps its own.
      await users.grant(cy, [project, `${project}b`], 'viewer');
      const granted = (await users.get(cy)) as User;
      expect([roleOf(granted, project), roleOf(granted, `${project}b`)]).toEqual(['admin', 'viewer']);
      await store.close();
    });

    it('slows failed sign-ins per (address, account) pair, exponentially up to a cap, seen by every handle', async () => {
      let now = 1_000_000;
      const store = open();
      const failures = new SignInFailures(store, { now: () => now });
      const replicaStore = open();
      const replica = new SignInFailures(replicaStore, { now: () => now });
      const ada = email('ada');
      expect(await failures.wait('192.0.2.1', ada)).toBe(0);
      const waits: number[] = [];
      for (let i = 0; i < 12; i++) {
        waits.push(await failures.fail('192.0.2.1', ada));
        // Another replica sees the wait (Redis: shared by every dashboard).
        expect(await replica.wait('192.0.2.1', ada.toUpperCase())).toBe(waits[i]);
        now += waits[i] as number;
        expect(await failures.wait('192.0.2.1', ada)).toBe(0);
      }
      expect(waits).toEqual([
        1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 128_000, 256_000, 512_000, 900_000, 900_000,
      ]);
      expect(waits.slice(0, 12)).toEqual(Array.from({ length: 12 }, (_, i) => signInDelayMs(i + 1)));
      expect(signInDelayMs(1_000)).toBe(SIGN_IN_DELAY_CAP_MS);
      await failures.fail('192.0.2.1', ada);
      now += 1_000;
      expect(await failures.wait('192.0.2.1', ada)).toBe(SIGN_IN_DELAY_CAP_MS - 1_000);
      // Not the same account from another address, nor another account from this one.
      expect(await failures.wait('192.0.2.2', ada)).toBe(0);
      expect(await failures.wait('192.0.2.1', email('bob'))).toBe(0);
      // A success forgets the pair's failures: the next failure waits the base again.
      await replica.succeed('192.0.2.1', ada);
      expect(await failures.wait('192.0.2.1', ada)).toBe(0);
      expect(await failures.fail('192.0.2.1', ada)).toBe(1_000);
      await replicaStore.close();
      await store.close();
    });

    it("keeps a project's annotations and segments apart from other projects', seen by every handle", async () => {
      const store = open();
      const projects = new ProjectStore(store);
      const otherStore = open();
      const other = new ProjectStore(otherStore);
      const [shop, blog] = [`shop-${randomUUID()}`, `blog-${randomUUID()}`];
      const later = await projects.addAnnotation(shop, {
        date: '2026-03-02T10:00:00Z',
        text: 'v2 deployed',
        created_by: 'ada@example.com',
      });
      const earlier = await other.addAnnotation(shop, {
        date: '2026-03-01',
        text: 'campaign',
        created_by: 'cli',
      });
      await projects.addAnnotation(blog, { date: '2026-03-01', text: 'other project', created_by: 'cli' });
      expect(await projects.annotations(shop)).toEqual([earlier, later]);
      expect(later).toMatchObject({ id: expect.any(String), created_at: expect.any(String) });
      expect(await other.deleteAnnotation(shop, later.id)).toBe(true);
      expect(await projects.deleteAnnotation(shop, later.id)).toBe(false);
      expect(await projects.deleteAnnotation(blog, earlier.id)).toBe(false);
      expect((await projects.annotations(shop)).map((a) => a.text)).toEqual(['campaign']);
      expect((await projects.annotations(blog)).map((a) => a.text)).toEqual(['other project']);

      const mobile = await projects.addSegment(shop, {
        name: 'Mobile',
        filters: 'device==Mobile',
        created_by: 'ada@example.com',
      });
      const berlin = await other.addSegment(shop, {
        name: 'Berlin',
        filters: 'country==DE',
        created_by: 'bob',
      });
      expect(await other.segments(shop)).toEqual([berlin, mobile]);
      expect(await projects.segments(blog)).toEqual([]);
      expect(await projects.deleteSegment(shop, berlin.id)).toBe(true);
      expect(await other.segments(shop)).toEqual([mobile]);
      await otherStore.close();
      await store.close();
    });

    it('makes an invitee a member once: new account or existing, refused when reused, revoked, replaced or expired', async () => {
      const store = open();
      let now = Date.now();
      const users = new Users(store);
      const invitations = new Invitations(store, users, () => now);
      const project = `p${randomUUID().slice(0, 8)}`;
      const [ada, bob, cy, dee] = [email('ada'), email('bob'), email('cy'), email('dee')];
      await users.add(ada, [project]);
      await expect(invitations.create(project, ada, 'viewer', ada)).rejects.toThrow(/member .* already/);

      // A new account: the password is set by accepting, once.
      const first = await invitations.create(project, bob, 'admin', ada);
      expect(first.token).toMatch(/^inv_/);
      expect(await invitations.peek(first.token)).toMatchObject({
        email: bob,
        role: 'admin',
        account_exists: false,
      });
      await expect(invitations.accept(first.token, 'short')).rejects.toThrow(/10 characters/);
      const bobUser = await invitations.accept(first.token, 'bob password 1');
      expect(roleOf(bobUser as User, project)).toBe('admin');
      expect(await users.authenticate(bob, 'bob password 1')).not.toBeNull();
      expect(await invitations.accept(first.token, 'bob password 1')).toEqual({ refused: 'unknown' });
      expect(await invitations.peek(first.token)).toBeNull();

      // An existing account proves it is its own with its password; a wrong one does not use the link up.
      await users.add(cy, [`${project}x`], 'cy password 1');
      const second = await invitations.create(project, cy, 'viewer', ada);
      expect((await invitations.peek(second.token))?.account_exists).toBe(true);
      expect(await invitations.accept(second.token, 'not cys password')).toEqual({ refused: 'password' });
      const cyUser = (await invitations.accept(second.token, 'cy password 1')) as User;
      expect([roleOf(cyUser, project), roleOf(cyUser, `${project}x`)]).toEqual(['viewer', 'owner']);

      // A newer invitation replaces the older; a revoked one is gone; both are listed while pending.
      const older = await invitations.create(project, dee, 'viewer', ada);
      const newer = await invitations.create(project, dee, 'admin', ada);
      expect((await invitations.list(project)).map((i) => [i.email, i.role])).toEqual([[dee, 'admin']]);
      expect(await invitations.accept(older.token, 'dee password 1')).toEqual({ refused: 'unknown' });
      expect(await invitations.revoke(`${project}x`, newer.invitation.id)).toBe(false);
      expect(await invitations.revoke(project, newer.invitation.id)).toBe(true);
      expect(await invitations.accept(newer.token, 'dee password 1')).toEqual({ refused: 'unknown' });

      // Expired after 7 days; and of two accepts of one link at once, one wins.
      const late = await invitations.create(project, dee, 'viewer', ada);
      now += INVITATION_TTL_MS;
      expect(await invitations.list(project)).toEqual([]);
      expect(await invitations.accept(late.token, 'dee password 1')).toEqual({ refused: 'unknown' });
      expect(await users.get(dee)).toBeNull();
      const raced = await invitations.create(project, dee, 'viewer', ada);
      const otherStore = open();
      const other = new Invitations(otherStore, new Users(otherStore), () => now);
      const outcomes = await Promise.allSettled([
        invitations.accept(raced.token, 'dee password 1'),
        other.accept(raced.token, 'dee password 2'),
      ]);
      const made = outcomes.filter((o) => o.status === 'fulfilled' && 'email' in o.value);
      expect(made).toHaveLength(1);
      expect(roleOf((await users.get(dee)) as User, project)).toBe('viewer');
      await otherStore.close();
      await store.close();
    });

    it('takes annotation dates as a real day or an instant with a zone', () => {
      for (const ok of ['2026-03-01', '2024-02-29', '2026-03-01T10:00Z', '2026-03-01T10:00:00.123+02:00'])
        expect(isAnnotationDate(ok), ok).toBe(true);
      for (const bad of ['2026-02-30', '2026-3-1', '2026-03-01T10:00', '2026-03-01T25:00Z', 'tomorrow', ''])
        expect(isAnnotationDate(bad), bad).toBe(false);
    });
  });
}
