// The tally command line. It reads the same configuration as the server (TALLY_DATA_DIR, REDIS_URL, …)
// so it works on the same tokens, from the repository root as `npx tally …`.
import { parseArgs } from 'node:util';
import { loadConfig } from '@tally/config';
import { runLog } from './log.ts';
import { runReport, runRevenue } from './reports.ts';
import { runMigrate, runSql } from './sql.ts';
import { runTokens } from './tokens.ts';
import { runWarehouse } from './warehouse-credentials.ts';

const USAGE = `Usage: tally <command>

Commands:
  tokens create --project <id> --kind public|secret   Create a token; it is printed alone on the last line
  tokens list [--json]                                List tokens (never the tokens themselves)
  tokens revoke <token|id>                            Revoke a token; running gateways drop it within seconds
  sql "<statement>"                                   Run SQL on the warehouse; rows are printed as JSON lines
  migrate                                             Apply the warehouse's schema migrations
  report traffic --project <id> --from YYYY-MM-DD --to YYYY-MM-DD [--json]
                                                      Pageviews, visitors, sessions, events, top pages and sources
  report mrr --project <id> --from YYYY-MM --to YYYY-MM [--currency USD] [--json]
                                                      MRR, movements, churn rates, ARPA and cash revenue per month
  revenue search --project <id> --metadata key=value [...] [--json]
                                                      Revenue records whose metadata has these keys and values
  log groups [--json]                                 Consumer groups of the embedded record log: position, lag
  log forget-group <group>                            Drop a group no consumer uses, so retention stops waiting for it
  warehouse credentials [--json]                      URL and users (read-only analyst, writer) of the running
                                                      Tally's ClickHouse HTTP interface

Configuration comes from the environment, as for the server (TALLY_DATA_DIR, REDIS_URL, CLICKHOUSE_URL,
TALLY_ENV_FILE). While \`npm start\` runs, the warehouse commands go through the query endpoint it publishes.`;

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
    case 'sql':
      return runSql(config, rest, parseArgs);
    case 'migrate':
      return runMigrate(config);
    case 'report':
      return runReport(config, rest, parseArgs);
    case 'revenue':
      return runRevenue(config, rest, parseArgs);
    case 'log':
      return runLog(config, rest, parseArgs);
    case 'warehouse':
      return runWarehouse(config, rest, parseArgs);
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  const usage =
    error instanceof UsageError || String((error as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS');
  process.stderr.write(`tally: ${(error as Error).message}\n${usage ? `\n${USAGE}\n` : ''}`);
  process.exitCode = usage ? 2 : 1;
}
