// The tally command line. It reads the same configuration as the server (TALLY_DATA_DIR, REDIS_URL, …)
// so it works on the same tokens, from the repository root as `npx tally …`.
import { parseArgs } from 'node:util';
import { loadConfig } from '@tally/config';
import { runTokens } from './tokens.ts';

const USAGE = `Usage: tally <command>

Commands:
  tokens create --project <id> --kind public|secret   Create a token; it is printed alone on the last line
  tokens list [--json]                                List tokens (never the tokens themselves)
  tokens revoke <token|id>                            Revoke a token; running gateways drop it within seconds

Configuration comes from the environment, as for the server (TALLY_DATA_DIR, REDIS_URL, TALLY_ENV_FILE).`;

export class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return command ? 0 : 2;
  }
  const config = loadConfig();
  switch (command) {
    case 'tokens':
      return runTokens(config, rest, parseArgs);
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  const usage =
    error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
  process.stderr.write(`tally: ${(error as Error).message}\n${usage ? `\n${USAGE}\n` : ''}`);
  process.exitCode = usage ? 2 : 1;
}
