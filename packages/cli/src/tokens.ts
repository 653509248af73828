// `tally tokens create|list|revoke`: token administration (ingest tokens and the dashboard's read keys) on the store the configuration names
// (Redis when REDIS_URL is set, else TALLY_DATA_DIR/tokens.json).
import type { parseArgs as ParseArgs } from 'node:util';
import type { TallyConfig } from '@tally/config';
import {
  assertProjectId,
  connectRedis,
  openTokenStore,
  TOKEN_KINDS,
  type TokenKind,
  type TokenStore,
} from '@tally/tokens';
import { checkArgument, UsageError } from './usage-error.ts';

export async function runTokens(
  config: TallyConfig,
  argv: string[],
  parseArgs: typeof ParseArgs,
): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      project: { type: 'string' },
      kind: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const [action, target] = positionals;
  // The arguments first: a mistake opens no store.
  if (action === 'create') {
    if (!values.project) throw new UsageError('tokens create needs --project <id>');
    checkArgument(() => assertProjectId(values.project as string));
    if (!TOKEN_KINDS.includes(values.kind as TokenKind)) {
      throw new UsageError('tokens create needs --kind public, secret or read');
    }
  } else if (action === 'revoke') {
    if (!target) throw new UsageError('tokens revoke needs a token or a token id');
  } else if (action !== 'list') {
    throw new UsageError(`unknown tokens action "${action ?? ''}" (create, list or revoke)`);
  }
  const { store, close } = tokenStoreOf(config);
  try {
    if (action === 'create') {
      const { token, info } = await store.create(values.project as string, values.kind as TokenKind);
      process.stdout.write(
        `Created a ${info.kind} token for project ${info.project_id} (id ${info.id}). ` +
          'It is shown only now; store it safely.\n',
      );
      process.stdout.write(`${token}\n`);
      return 0;
    }
    if (action === 'list') {
      const tokens = await store.list();
      if (values.json) {
        process.stdout.write(`${JSON.stringify(tokens.map(({ hash: _hash, ...rest }) => rest))}\n`);
      } else {
        for (const t of tokens) {
          const state = t.revoked_at ? `revoked ${t.revoked_at}` : 'active';
          process.stdout.write(
            `${t.id}  ${t.hint.padEnd(10)} ${t.kind.padEnd(6)} ${t.project_id}  created ${t.created_at}  ${state}\n`,
          );
        }
        if (tokens.length === 0) process.stdout.write('no tokens yet\n');
      }
      return 0;
    }
    if (!(await store.revoke(target as string))) {
      process.stderr.write('tally: no active token matches\n');
      return 1;
    }
    process.stdout.write('Revoked. Running gateways stop accepting it within seconds.\n');
    return 0;
  } finally {
    await close();
  }
}

/** The token store the configuration names (Redis when REDIS_URL is set, else the data directory's file). */
export function tokenStoreOf(config: TallyConfig): { store: TokenStore; close(): Promise<void> } {
  const redis = connectRedis(config);
  const store = openTokenStore(config, redis);
  return {
    store,
    async close() {
      await store.close();
      redis?.disconnect();
    },
  };
}
