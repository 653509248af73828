// `tally users add|list|remove|grant|role|link`: the dashboard's users and their role in each project
// (owner, admin, viewer; --role, default owner: what a grant gave before roles), in the store the configuration names
// (Redis when REDIS_URL is set, else TALLY_DATA_DIR/dashboard.mdb), beside a running dashboard or not.
// `add` prints a one-time sign-in link that sets the password (or reads it from stdin with
// --password-stdin, for automation); passwords and links are stored hashed only. A user is added only when
// everything given is valid (email, projects, password). When SMTP is configured (SMTP_HOST), `add` and
// `link` also mail the link to the user (packages/mail); it is printed either way.
import type { parseArgs as ParseArgs } from 'node:util';
import type { TallyConfig } from '@tally/config';
import { openMailer, passwordLinkMessage } from '@tally/mail';
import { readPublishedAddress } from '@tally/state-files';
import {
  ALL_PROJECTS,
  isRole,
  normaliseEmail,
  openStateStore,
  ROLES,
  type Role,
  roleOf,
  Users,
} from '@tally/state-store';
import { assertProjectId, connectRedis } from '@tally/tokens';
import { tokenStoreOf } from './tokens.ts';
import { checkArgument, UsageError } from './usage-error.ts';

/**
 * The sign-in link of a token: the dashboard's set-password page, the token in the fragment (never sent in a
 * request line). On DASHBOARD_PUBLIC_URL; else where the dashboard running on this data directory listens
 * (the address it publishes there); else on localhost:DASHBOARD_PORT.
 */
export function signInLink(config: TallyConfig, token: string): string {
  const base = (
    config.DASHBOARD_PUBLIC_URL ??
    readPublishedAddress(config.dataDir, 'dashboard')?.url ??
    `http://localhost:${config.DASHBOARD_PORT}`
  ).replace(/\/+$/, '');
  return `${base}/set-password#token=${token}`;
}

/** Refuses a project no token was ever made for (a project is made by its first token): a typo grants nothing. */
export async function checkProjectsExist(config: TallyConfig, projects: string[]): Promise<void> {
  const named = projects.filter((project) => project !== ALL_PROJECTS);
  if (named.length === 0) return;
  const tokens = tokenStoreOf(config);
  try {
    const known = new Set((await tokens.store.list()).map((t) => t.project_id));
    const unknown = named.filter((project) => !known.has(project));
    if (unknown.length > 0)
      throw new Error(
        `unknown project${unknown.length > 1 ? 's' : ''} ${unknown.map((p) => `"${p}"`).join(', ')}: no token was ever made for it (a project is made by its first token: npx tally tokens create --project <id> --kind public; npx tally tokens list shows the projects)`,
      );
  } finally {
    await tokens.close();
  }
}

/** "shop (owner), blog (viewer)", or "every project (owner)". */
function membership(user: { projects: string[]; roles?: Record<string, Role> }): string {
  return user.projects
    .map((p) => (p === ALL_PROJECTS ? 'every project (owner)' : `${p} (${roleOf(user, p)})`))
    .join(', ');
}

/**
 * Mails a password link to its user when SMTP is configured, and says so; a failure to send is reported on
 * stderr without failing the command (the link was printed).
 */
async function mailPasswordLink(config: TallyConfig, email: string, link: string): Promise<void> {
  const mailer = openMailer(config);
  if (!mailer.configured) return;
  try {
    await mailer.send(passwordLinkMessage(email, link));
    process.stdout.write(`The link was also mailed to ${email}.\n`);
  } catch (error) {
    process.stderr.write(`tally: the link could not be mailed (${(error as Error).message})\n`);
  } finally {
    mailer.close();
  }
}

async function readAll(input: AsyncIterable<Buffer | string>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of input) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** `stdin`: where --password-stdin reads (the process's own; a test gives its own). */
export async function runUsers(
  config: TallyConfig,
  argv: string[],
  parseArgs: typeof ParseArgs,
  stdin: AsyncIterable<Buffer | string> = process.stdin,
): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      project: { type: 'string', multiple: true },
      'all-projects': { type: 'boolean', default: false },
      'password-stdin': { type: 'boolean', default: false },
      role: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const [action, email] = positionals;
  const projects = [...(values.project ?? []), ...(values['all-projects'] ? [ALL_PROJECTS] : [])];
  // The arguments first: a mistake opens no store.
  if (!['add', 'link', 'grant', 'role', 'list', 'remove'].includes(action ?? '')) {
    throw new UsageError(`unknown users action "${action ?? ''}" (add, list, remove, grant, role or link)`);
  }
  if (values.role !== undefined && !isRole(values.role)) {
    throw new UsageError(`--role is one of ${ROLES.join(', ')}, not "${values.role}"`);
  }
  const role = (values.role ?? 'owner') as Role;
  if (action === 'role') {
    if (values.role === undefined || values.project?.length !== 1 || values['all-projects']) {
      throw new UsageError('users role needs one --project <id> and --role owner|admin|viewer');
    }
  }
  if (action !== 'list') {
    if (!email) throw new UsageError(`users ${action} needs an email`);
    checkArgument(() => normaliseEmail(email));
  }
  if (action === 'add' || action === 'grant') {
    if (projects.length === 0) {
      throw new UsageError(`users ${action} grants at least one project: --project <id>, or --all-projects`);
    }
    for (const project of projects)
      if (project !== ALL_PROJECTS) checkArgument(() => assertProjectId(project));
  }
  const address = email ?? ''; // checked above for every action that takes one
  if (action === 'add' || action === 'grant' || action === 'role') await checkProjectsExist(config, projects);
  const redis = connectRedis(config);
  const store = openStateStore(config, redis);
  const users = new Users(store);
  try {
    switch (action) {
      case 'add': {
        // The password is read first and checked with the rest: a refused one adds no user.
        const password = values['password-stdin'] ? await readAll(stdin) : undefined;
        const user = await users.add(address, projects, password, role);
        if (password !== undefined) {
          process.stdout.write(`Added ${user.email} (${membership(user)}) with the password given.\n`);
          return 0;
        }
        const link = signInLink(config, await users.createSignInLink(user.email));
        process.stdout.write(
          `Added ${user.email} (${membership(user)}). This link sets the password; it works once, for 7 days:\n`,
        );
        process.stdout.write(`${link}\n`);
        await mailPasswordLink(config, user.email, link);
        return 0;
      }
      case 'link': {
        const link = signInLink(config, await users.createSignInLink(address));
        process.stdout.write(
          "A new sign-in link (it sets a new password, ending the user's sessions; once, for 7 days; earlier links stop working):\n",
        );
        process.stdout.write(`${link}\n`);
        await mailPasswordLink(config, normaliseEmail(address), link);
        return 0;
      }
      case 'grant': {
        const user = await users.grant(address, projects, role);
        process.stdout.write(`${user.email}: ${membership(user)}\n`);
        return 0;
      }
      case 'role': {
        const user = await users.setRole(address, projects[0] ?? '', role);
        process.stdout.write(`${user.email}: ${membership(user)}\n`);
        return 0;
      }
      case 'list': {
        const list = await users.list();
        if (values.json) process.stdout.write(`${JSON.stringify(list)}\n`);
        else {
          for (const u of list) {
            process.stdout.write(
              `${u.email}  ${membership(u)}  ${u.has_password ? 'password set' : 'no password yet'}  created ${u.created_at}\n`,
            );
          }
          if (list.length === 0) process.stdout.write('no users yet\n');
        }
        return 0;
      }
      default: {
        // remove, the only action left
        if (!(await users.remove(address))) {
          process.stderr.write('tally: no such user\n');
          return 1;
        }
        process.stdout.write('Removed. Their sessions end at their next request.\n');
        return 0;
      }
    }
  } finally {
    await store.close();
    redis?.disconnect();
  }
}
