// `tally projects list|show|set`: what is set per project for its ingest tokens (today: the origins its
// public tokens may send from), on the token store the configuration names, where running gateways pick it
// up with the tokens (within TOKEN_REFRESH_MS).
import type { parseArgs as ParseArgs } from 'node:util';
import type { TallyConfig } from '@tally/config';
import { assertProjectId, normalizeOrigin, type ProjectAccess, type TokenInfo } from '@tally/tokens';
import { tokenStoreOf } from './tokens.ts';
import { checkArgument, UsageError } from './usage-error.ts';

interface ProjectView {
  project_id: string;
  /** Empty: any origin. */
  allowed_origins: string[];
  active_tokens: { public: number; secret: number; read: number };
}

export async function runProjects(
  config: TallyConfig,
  argv: string[],
  parseArgs: typeof ParseArgs,
): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { 'allowed-origins': { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  const [action, project] = positionals;
  // The arguments first: a mistake opens no store.
  let origins: string[] = [];
  if (action === 'show' || action === 'set') {
    if (!project) throw new UsageError(`projects ${action} needs a project id`);
  } else if (action !== 'list') {
    throw new UsageError(`unknown projects action "${action ?? ''}" (list, show or set)`);
  }
  if (action === 'set') {
    checkArgument(() => assertProjectId(project as string));
    const given = values['allowed-origins'];
    if (given === undefined)
      throw new UsageError("projects set needs --allowed-origins <origin,...> ('' for any)");
    origins = given
      .split(',')
      .map((o) => o.trim())
      .filter(Boolean);
    for (const origin of origins) checkArgument(() => normalizeOrigin(origin));
  }
  const { store, close } = tokenStoreOf(config);
  try {
    const views = async () => projectViews(await store.list(), await store.projects());
    switch (action) {
      case 'list': {
        const all = await views();
        if (values.json) process.stdout.write(`${JSON.stringify(all)}\n`);
        else if (all.length === 0)
          process.stdout.write('No projects yet (a project is made by its first token)\n');
        else for (const view of all) process.stdout.write(`${describe(view)}\n`);
        return 0;
      }
      case 'show': {
        const view = (await views()).find((v) => v.project_id === project);
        if (!view) {
          process.stderr.write(`tally: no project "${project}" (npx tally projects list shows them)\n`);
          return 1;
        }
        process.stdout.write(values.json ? `${JSON.stringify(view)}\n` : `${describe(view)}\n`);
        return 0;
      }
      default: {
        // set, the only action left
        const access = await store.setAllowedOrigins(project as string, origins);
        process.stdout.write(
          access.allowed_origins.length
            ? `Public tokens of ${project} may now send from: ${access.allowed_origins.join(', ')} ` +
                '(browsers elsewhere get 403; servers and secret tokens are not bound). Running gateways apply it within seconds.\n'
            : `Public tokens of ${project} may now send from any origin.\n`,
        );
        return 0;
      }
    }
  } finally {
    await close();
  }
}

/** Every project with a token or settings, by id. */
function projectViews(tokens: TokenInfo[], projects: ProjectAccess[]): ProjectView[] {
  const views = new Map<string, ProjectView>();
  const view = (id: string) => {
    let found = views.get(id);
    if (!found) {
      found = { project_id: id, allowed_origins: [], active_tokens: { public: 0, secret: 0, read: 0 } };
      views.set(id, found);
    }
    return found;
  };
  for (const token of tokens) if (!token.revoked_at) view(token.project_id).active_tokens[token.kind]++;
  for (const token of tokens) view(token.project_id);
  for (const access of projects) view(access.project_id).allowed_origins = access.allowed_origins;
  return [...views.values()].sort((a, b) => a.project_id.localeCompare(b.project_id));
}

function describe(view: ProjectView): string {
  const { public: pub, secret, read } = view.active_tokens;
  const origins = view.allowed_origins.length ? view.allowed_origins.join(', ') : 'any';
  return `${view.project_id}  tokens: ${pub} public, ${secret} secret, ${read} read  allowed origins: ${origins}`;
}
