// The tally command line. It reads the same configuration as the server (TALLY_DATA_DIR, REDIS_URL, …)
// so it works on the same tokens, from the repository root as `npx tally …`. runCli runs one command line
// and answers its exit code: 0, 1 when the command failed, 2 for an argument mistake (usage-error.ts),
// which prints the usage below the message.
// Each command's module is loaded only when it runs: `tally sql` does not load the record log's libraries
// (kafkajs, lmdb), nor `tally tokens` the warehouse's.
import { parseArgs } from 'node:util';
import { loadConfig } from '@tally/config';
import { keepNewFilesPrivate } from '@tally/state-files';
import { findBaseDir } from './base-dir.ts';
import { isArgumentMistake, UsageError } from './usage-error.ts';

export const USAGE = `Usage: tally <command>

Commands:
  tokens create --project <id> --kind public|secret|read
                                                      Create a token (read: a read key for the dashboard's
                                                      API); it is printed alone on the last line
  tokens list [--json]                                List tokens (never the tokens themselves)
  tokens revoke <token|id>                            Revoke a token; running gateways drop it within seconds
  projects list [--json] | show <id> [--json]         Projects (from their tokens) and their settings
  projects set <id> --allowed-origins <origin,...>    Origins the project's public tokens may send from
                                                      (browsers elsewhere get 403); '' allows any again
  users add <email> --project <id>... | --all-projects [--role owner|admin|viewer] [--password-stdin]
                                                      Add a dashboard user (role default owner); prints a
                                                      one-time link that sets the password (or reads it from
                                                      stdin)
  users role <email> --project <id> --role owner|admin|viewer
                                                      Change a member's role (a project keeps an owner)
  users list [--json] | remove <email> | grant <email> --project <id> [--role …] | link <email>
                                                      List, remove, grant projects, new sign-in link
  annotations add --project <id> --date YYYY-MM-DD "<text>" [--json]
                                                      A dated note (a deploy, a campaign) drawn on the
                                                      dashboard's time charts; --date also takes an ISO
                                                      timestamp with its zone
  annotations list --project <id> [--json] | remove <id> --project <id>
                                                      The project's notes, oldest first; remove one by id
  sql "<statement>"                                   Run SQL on the warehouse; rows are printed as JSON lines
  migrate                                             Apply the warehouse's schema migrations
  report <path> --project <id> [the API's query parameters as flags] [--json]
                                                      Any report of the read API, GET /api/v1/projects/{id}/<path>:
                                                      --json prints exactly the API's answer to the same query.
                                                      Flags are its parameter names: --from --to --filters
                                                      --compare --interval --limit --offset --sort --order
                                                      --property --currency --convert_to --by --touch --month
                                                      --figure --key --search --status (a flag the report
                                                      does not take is refused). Paths: traffic/summary,
                                                      traffic/timeseries, traffic/breakdown/<dimension>,
                                                      revenue/mrr, revenue/mrr/daily, revenue/attribution,
                                                      revenue/breakdown, revenue/reconciliation, revenue/records,
                                                      revenue/funnel, revenue/currencies, revenue/customers,
                                                      revenue/customers/<customer_id>. Traffic days are the
                                                      project's time zone's (default: the last 30 days)
  report traffic --project <id> [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--filters ...] [--json]
                                                      traffic/summary: the dashboard's visitors, visits,
                                                      pageviews, bounce rate and visit duration
  report traffic/overview --project <id> [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--limit N] [--json]
                                                      An overview for a terminal: pageviews, visitors, sessions,
                                                      visits, events, top pages, sources, campaigns and events
                                                      over days of the project's time zone (last 30 by default)
  report mrr --project <id> [--from YYYY-MM] [--to YYYY-MM] [--currency USD] [--filters ...] [--json]
                                                      revenue/mrr: MRR, movements, churn rates, ARPA, LTV and
                                                      cash revenue per month (default: the last 12 months)
  report mrr --daily --project <id> [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--currency USD] [--json]
                                                      revenue/mrr/daily: the same per day (UTC; default: the last
                                                      30 days, at most 366): MRR, ARR, paying customers, cash
  report mrr ... --convert_to EUR                     Every currency converted with the loaded exchange rates
                                                      and added (rates used and currencies left out listed);
                                                      --convert-to is the same flag
  report cohorts --project <id> [--from YYYY-MM] [--to YYYY-MM] [--currency USD] [--filters ...]
                 [--convert_to EUR] [--json]
                                                      revenue/cohorts: customers by the month they first paid,
                                                      each month after up to --to: customers, MRR, logo, net
                                                      and gross MRR retention
  report attribution --project <id> [--from YYYY-MM] [--to YYYY-MM] [--currency USD]
                     [--by channel|source|utm_campaign] [--touch first|last] [--filters ...] [--json]
                                                      revenue/attribution: MRR movements, MRR at the end, paying
                                                      customers and cash by the customers' first (or last) touch
  report breakdown --project <id> [--from YYYY-MM] [--to YYYY-MM] [--currency USD]
                   [--by plan|interval|coupon|source|campaign|payment_processor|metadata.<key>]
                   [--filters "plan==pro;metadata.team!=internal"] [--json]
                                                      revenue/breakdown without its metadata_keys: the same
                                                      figures by a customer attribute (its value on its latest
                                                      record that has one)
  report reconciliation --project <id> [--month YYYY-MM] [--currency USD] [--json]
                                                      revenue/reconciliation: a month's cash by kind, the MRR
                                                      bridge (exit 1 if it does not close) and data warnings
  revenue search --project <id> --metadata key=value [...] [--json]
                                                      Revenue records whose metadata has these keys and values
  revenue rates load <file.csv> | list [--base EUR] [--json]
                                                      Exchange rates you provide (never fetched): a header
                                                      month|date,currency,rate_to_EUR, then 2026-01,USD,0.92
  log groups [--json]                                 Consumer groups of the embedded record log: position, lag
  log forget-group <group>                            Drop a group no consumer uses, so retention stops waiting for it
  dead-letters list [--json]                          Records the consumers set aside as undeliverable, and why
  dead-letters show <id>                              One of them, with its record
  dead-letters replay <id>... | --all                 Put them back on their topics, to be landed again
  dead-letters discard <id>... | --all                Delete them for good
  kafka compatibility [--set LEVEL] [--type TYPE] [--json]
                                                      The schema registry's compatibility level of each
                                                      subject of the Kafka log (the operator's: Tally sets
                                                      SCHEMA_COMPATIBILITY only on a subject without one)
  warehouse credentials [--json]                      URL and users (read-only analyst, writer) of the running
                                                      Tally's ClickHouse HTTP interface
  import csv --project P FILE|-                       Import revenue history from a CSV file (columns: customer,
                                                      date, type, amount, currency, mrr_change, subscription,
                                                      plan, interval); checks every line first, imports nothing
                                                      on a bad one; a re-run adds nothing twice. --dry-run counts
  import stripe --project P [--dry-run] [--restart]   Import revenue history from Stripe (subscriptions, paid
                                                      invoices, refunds); the secret key from STRIPE_SECRET_KEY
                                                      or stdin, never an argument; resumes after an interruption
  warehouse reland [--json]                           With Tally stopped: land again from the record log the
                                                      records of warehouse parts the engine detached as damaged
                                                      (each once; the consumers do it at the next start)

Configuration comes from the environment, as for the server (TALLY_DATA_DIR, REDIS_URL, CLICKHOUSE_URL,
TALLY_ENV_FILE), relative to the nearest directory up from here with a .tally directory or a .env file.
While \`npm start\` runs, the warehouse commands go through the query endpoint it publishes.`;

async function run(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return command ? 0 : 2;
  }
  // Settings relative to the directory Tally runs from: found from a subdirectory too, unless given.
  if (!process.env.TALLY_DATA_DIR && !process.env.TALLY_ENV_FILE) {
    const base = findBaseDir(process.cwd());
    if (base) process.chdir(base);
  }
  const config = loadConfig();
  // What the commands create under TALLY_DATA_DIR (tokens.json, dashboard.mdb, chDB's files) is private.
  keepNewFilesPrivate();
  switch (command) {
    case 'tokens':
      return (await import('./tokens.ts')).runTokens(config, rest, parseArgs);
    case 'projects':
      return (await import('./projects.ts')).runProjects(config, rest, parseArgs);
    case 'users':
      return (await import('./users.ts')).runUsers(config, rest, parseArgs);
    case 'annotations':
      return (await import('./annotations.ts')).runAnnotations(config, rest, parseArgs);
    case 'sql':
      return (await import('./sql.ts')).runSql(config, rest, parseArgs);
    case 'migrate':
      return (await import('./sql.ts')).runMigrate(config);
    case 'report':
      return (await import('./reports.ts')).runReport(config, rest, parseArgs);
    case 'revenue':
      return (await import('./reports.ts')).runRevenue(config, rest, parseArgs);
    case 'log':
      return (await import('./log.ts')).runLog(config, rest, parseArgs);
    case 'dead-letters':
      return (await import('./dead-letters.ts')).runDeadLetters(config, rest, parseArgs);
    case 'kafka':
      return (await import('./kafka.ts')).runKafka(config, rest, parseArgs);
    case 'import':
      if (rest[0] === '--help' || rest[0] === '-h') {
        process.stdout.write(`${USAGE}\n`);
        return 0;
      }
      if (rest[0] === 'csv')
        return (await import('./import-csv.ts')).runImportCsv(config, rest.slice(1), parseArgs);
      if (rest[0] === 'stripe')
        return (await import('./import-stripe.ts')).runImportStripe(config, rest.slice(1), parseArgs);
      throw new UsageError(`unknown import source "${rest[0] ?? ''}" (csv, stripe)`);
    case 'warehouse':
      if (rest[0] === 'reland') {
        return (await import('./warehouse-reland.ts')).runReland(config, rest.slice(1), parseArgs);
      }
      return (await import('./warehouse-credentials.ts')).runWarehouse(config, rest, parseArgs);
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

/** Runs one command line; answers its exit code, having written the failure (and for a mistake, the usage). */
export async function runCli(argv: string[]): Promise<number> {
  try {
    return await run(argv);
  } catch (error) {
    const usage = isArgumentMistake(error);
    // A warehouse error's own text (the engine's message) is what a person at the command line needs.
    const message = (error as { detail?: string }).detail ?? (error as Error).message;
    process.stderr.write(`tally: ${message}\n${usage ? `\n${USAGE}\n` : ''}`);
    return usage ? 2 : 1;
  }
}
