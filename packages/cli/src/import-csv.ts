// `tally import csv --project P FILE|-`: revenue history from any billing system, as a CSV file with the
// columns of docs/revenue.md ("Importing revenue history"). Every line is checked first (against the same
// contract the gateway applies); one bad line imports nothing. The records are then appended to the record
// log as the gateway appends accepted requests, with ids derived from project and line content, so the
// revenue consumer's first-copy rule (record_ids) drops what a re-run sends again and its MRR upkeep runs
// on the imported records exactly as on webhook ones (docs/design/revenue-import.md).
import { readFileSync } from 'node:fs';
import type { parseArgs as ParseArgs } from 'node:util';
import type { TallyConfig } from '@tally/config';
import {
  type IngestRecordOf,
  REVENUE_EVENT_TYPES,
  type RevenueData,
  type RevenueEventType,
  validatePayload,
} from '@tally/contract';
import { recordIdFor } from '@tally/revenue';
import { parse } from 'csv-parse/sync';
import { appendRevenueRecords, openImportLog } from './land-records.ts';
import { UsageError } from './usage-error.ts';

/** The columns of an import file; the first three and amount are required. */
export const CSV_COLUMNS = [
  'customer',
  'date',
  'type',
  'amount',
  'currency',
  'mrr_change',
  'subscription',
  'plan',
  'interval',
] as const;
const REQUIRED = ['customer', 'date', 'type', 'amount'] as const;

export class CsvImportError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(
      `nothing imported: ${problems.length} problem${problems.length === 1 ? '' : 's'}\n${problems.join('\n')}`,
    );
    this.name = 'CsvImportError';
    this.problems = problems;
  }
}

const DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})?)?$/;
const NUMBER = /^-?\d+(\.\d+)?$/;

/**
 * The revenue records of an import file, every line checked; throws a CsvImportError listing each bad line
 * (line number, column, what is wrong) when any is bad.
 */
export function revenueRecordsFromCsv(
  text: string,
  projectId: string,
  receivedAt: number,
): Array<IngestRecordOf<'revenue'>> {
  let rows: string[][];
  try {
    rows = parse(text, { skip_empty_lines: true, trim: true, bom: true, relax_column_count: false });
  } catch (error) {
    throw new CsvImportError([`not a readable CSV file: ${(error as Error).message}`]);
  }
  const [header, ...lines] = rows;
  if (!header) throw new CsvImportError(['the file is empty (a header line is expected)']);
  const columns = header.map((h) => h.toLowerCase());
  const problems: string[] = [];
  for (const c of columns)
    if (!(CSV_COLUMNS as readonly string[]).includes(c))
      problems.push(`line 1: unknown column "${c}" (columns: ${CSV_COLUMNS.join(', ')})`);
  for (const c of REQUIRED)
    if (!columns.includes(c)) problems.push(`line 1: the required column "${c}" is missing`);
  if (problems.length > 0) throw new CsvImportError(problems);

  const records: Array<IngestRecordOf<'revenue'>> = [];
  const seen = new Map<string, number>();
  lines.forEach((cells, index) => {
    const lineNumber = index + 2;
    const cell = (name: (typeof CSV_COLUMNS)[number]) => cells[columns.indexOf(name)] ?? '';
    const bad = (column: string, what: string) => problems.push(`line ${lineNumber}, ${column}: ${what}`);
    const before = problems.length;
    const customer = cell('customer');
    if (customer === '') bad('customer', 'is empty');
    const date = cell('date');
    const timestamp = DATE.test(date)
      ? Date.parse(date.length === 10 ? `${date}T00:00:00Z` : date)
      : Number.NaN;
    if (Number.isNaN(timestamp)) bad('date', `"${date}" is not a date (YYYY-MM-DD or ISO 8601)`);
    const type = cell('type').toLowerCase();
    if (!(REVENUE_EVENT_TYPES as readonly string[]).includes(type))
      bad('type', `"${cell('type')}" is not one of ${REVENUE_EVENT_TYPES.join(', ')}`);
    const amountText = cell('amount');
    if (!NUMBER.test(amountText)) bad('amount', `"${amountText}" is not a number (e.g. 49.00)`);
    const mrrText = cell('mrr_change');
    if (mrrText !== '' && !NUMBER.test(mrrText)) bad('mrr_change', `"${mrrText}" is not a number`);
    if (problems.length > before) return;

    const metadata: Record<string, string> = { source: 'csv-import' };
    if (cell('plan') !== '') metadata.plan = cell('plan');
    if (cell('interval') !== '') metadata.interval = cell('interval');
    const subscription = cell('subscription');
    const data: RevenueData = {
      visitor_fingerprint: `import:${customer}`,
      session_id: `import:${customer}`,
      customer_id: customer,
      amount: Number(amountText),
      currency: cell('currency') || 'USD',
      transaction_id: `csv:${recordKey(cells)}`,
      payment_processor: 'csv-import',
      event_type: type as RevenueEventType,
      is_recurring: type !== 'purchase' && type !== 'refund',
      metadata,
      timestamp,
      ...(subscription !== '' && { customer_subscription_id: subscription }),
      ...(mrrText !== '' && { mrr_impact: Number(mrrText) }),
    };
    const checked = validatePayload('revenue', data);
    if (!checked.ok) {
      bad(columnOf(checked.message), checked.message);
      return;
    }
    const key = `${projectId}\u0000${recordKey(cells.map((c, i) => (columns[i] === 'type' ? c.toLowerCase() : c)))}`;
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      bad('(line)', `repeats line ${earlier} exactly: the same record twice`);
      return;
    }
    seen.set(key, lineNumber);
    records.push({
      id: recordIdFor(`csv:${key}`),
      type: 'revenue',
      project_id: projectId,
      received_at: receivedAt,
      timestamp,
      client_timestamp: timestamp,
      timestamp_clamped: false,
      user_agent: null,
      visitor_fingerprint_derived: false,
      country: null,
      data: checked.value,
    });
  });
  if (problems.length > 0) throw new CsvImportError(problems);
  return records;
}

const recordKey = (cells: string[]): string => cells.join('\u001f');

/** The CSV column a contract message is about (its field name mapped back). */
function columnOf(message: string): string {
  const fields: Record<string, string> = {
    customer_id: 'customer',
    amount: 'amount',
    currency: 'currency',
    mrr_impact: 'mrr_change',
    customer_subscription_id: 'subscription',
    timestamp: 'date',
  };
  for (const [field, column] of Object.entries(fields)) if (message.includes(field)) return column;
  return '(line)';
}

/** `tally import csv --project P FILE|-`. */
export async function runImportCsv(
  config: TallyConfig,
  argv: string[],
  parseArgs: typeof ParseArgs,
): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { project: { type: 'string' }, 'dry-run': { type: 'boolean', default: false } },
  });
  const [file] = positionals;
  if (!values.project || !file || positionals.length > 1)
    throw new UsageError('tally import csv --project P FILE (or - for stdin)');
  const text = readFileSync(file === '-' ? 0 : file, 'utf8');
  const records = revenueRecordsFromCsv(text, values.project, Date.now());
  if (values['dry-run']) {
    process.stdout.write(`would import ${records.length} revenue record(s) into ${values.project}\n`);
    return 0;
  }
  const log = await openImportLog(config);
  try {
    await appendRevenueRecords(log, records);
  } finally {
    await log.close();
  }
  process.stdout.write(
    `appended ${records.length} revenue record(s) for ${values.project} to the record log; ` +
      'the revenue consumer lands them (a record already landed is skipped by its id)\n',
  );
  return 0;
}
