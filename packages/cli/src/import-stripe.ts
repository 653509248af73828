// `tally import stripe --project P`: revenue history from Stripe's API, paged with the official `stripe`
// client. Stripe's events go back 30 days only, so the import reads objects: customers (names and emails),
// subscriptions (their ends: churn), paid invoices (first payments with their MRR, renewals, plan changes)
// and refunds. Each object goes through the same mapper as its webhook event (`revenueFromStripeEvent`), so
// the records and their MRR are the ones the webhooks build, and carries the webhook's transaction id where
// the object gives it (the invoice id, the refund id, the subscription's end): the revenue consumer's first-copy rule on
// (project, transaction_id) then drops a webhook of an imported payment, and a re-run. Record ids are
// derived from project and Stripe object id. After each page the position in each list (`starting_after`)
// is saved under the data directory, so a run that was interrupted continues where it stopped; what it
// lands again is dropped by id. The rules and their limits: docs/revenue.md ("Importing from Stripe");
// the design: docs/design/revenue-import.md.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { parseArgs as ParseArgs } from 'node:util';
import type { TallyConfig } from '@tally/config';
import { type IngestRecordOf, validatePayload } from '@tally/contract';
import {
  fromMinorUnits,
  prorationMrr,
  recordIdFor,
  revenueFromStripeEvent,
  type StripeEventLike,
} from '@tally/revenue';
import Stripe from 'stripe';
import { appendRevenueRecords, openImportLog, type RecordLogWriter } from './land-records.ts';
import { UsageError } from './usage-error.ts';

/** The lists the import pages through, in this order; customers first (their names go on the records). */
export const STRIPE_LISTS = ['customers', 'subscriptions', 'invoices', 'refunds'] as const;
export type StripeList = (typeof STRIPE_LISTS)[number];

/** How far each list was read: the last object id of the last page landed, and whether the list is done. */
export type StripeCheckpoint = Partial<Record<StripeList, { after?: string; done?: boolean }>>;

export interface StripeImportOptions {
  projectId: string;
  /** Land each page's records; absent in a dry run. */
  land?: (records: Array<IngestRecordOf<'revenue'>>) => Promise<void>;
  checkpoint: StripeCheckpoint;
  /** Called after each page is landed, with the checkpoint to keep. */
  saveCheckpoint?: (checkpoint: StripeCheckpoint) => void;
  progress: (counts: StripeImportCounts) => void;
  pageSize?: number;
  receivedAt?: number;
}

export interface StripeImportCounts {
  /** Objects read per list. */
  read: Record<StripeList, number>;
  /** Records made per event_type. */
  records: Record<string, number>;
  /** Objects that carry no revenue record, with the reason (a trial, nothing paid, …). */
  skipped: number;
}

interface CustomerInfo {
  name?: string;
  email?: string;
}

/** Pages through the account's history and lands it page by page; returns the counts. */
export async function importStripe(
  stripe: Stripe,
  options: StripeImportOptions,
): Promise<StripeImportCounts> {
  const counts: StripeImportCounts = {
    read: { customers: 0, subscriptions: 0, invoices: 0, refunds: 0 },
    records: {},
    skipped: 0,
  };
  const checkpoint: StripeCheckpoint = structuredClone(options.checkpoint);
  const customers = new Map<string, CustomerInfo>();
  const limit = options.pageSize ?? 100;
  const receivedAt = options.receivedAt ?? Date.now();

  for (const list of STRIPE_LISTS) {
    // Customers are read in full on every run: their names belong on records of every later page.
    if (list !== 'customers' && checkpoint[list]?.done) continue;
    let after = list === 'customers' ? undefined : checkpoint[list]?.after;
    for (;;) {
      const page = await listPage(stripe, list, limit, after);
      const records: Array<IngestRecordOf<'revenue'>> = [];
      for (const object of page.data) {
        counts.read[list] += 1;
        if (list === 'customers') {
          const customer = object as Stripe.Customer;
          customers.set(customer.id, {
            name: customer.name ?? undefined,
            email: customer.email ?? undefined,
          });
          continue;
        }
        const record = recordFor(list, object, options.projectId, receivedAt, customers);
        if (!record) {
          counts.skipped += 1;
          continue;
        }
        counts.records[record.data.event_type ?? 'none'] =
          (counts.records[record.data.event_type ?? 'none'] ?? 0) + 1;
        records.push(record);
      }
      if (records.length > 0) await options.land?.(records);
      const last = page.data.at(-1);
      after = last ? (last as { id: string }).id : after;
      if (list !== 'customers') {
        checkpoint[list] = { after, done: !page.has_more };
        options.saveCheckpoint?.(checkpoint);
      }
      options.progress(counts);
      if (!page.has_more || !last) break;
    }
  }
  return counts;
}

function listPage(
  stripe: Stripe,
  list: StripeList,
  limit: number,
  after: string | undefined,
): Promise<{ data: unknown[]; has_more: boolean }> {
  const paging = { limit, ...(after && { starting_after: after }) };
  switch (list) {
    case 'customers':
      return stripe.customers.list(paging);
    case 'subscriptions':
      return stripe.subscriptions.list({ ...paging, status: 'all' });
    case 'invoices':
      return stripe.invoices.list({ ...paging, status: 'paid' });
    case 'refunds':
      // The charge names the customer and carries the metadata that attributes the refund.
      // With the charge's refunds, to know how much of it was refunded once each refund was made.
      return stripe.refunds.list({ ...paging, expand: ['data.charge', 'data.charge.refunds'] });
  }
}

/**
 * The record of one Stripe object, made by the webhook mapper of the event that announces it: a paid invoice
 * as `invoice.paid`, an ended subscription as `customer.subscription.deleted`, a refund as `charge.refunded`.
 */
function recordFor(
  list: Exclude<StripeList, 'customers'>,
  object: unknown,
  projectId: string,
  receivedAt: number,
  customers: Map<string, CustomerInfo>,
): IngestRecordOf<'revenue'> | undefined {
  const event = eventFor(list, object);
  if (!event) return undefined;
  const mapped = revenueFromStripeEvent(event.event);
  if (!mapped.ok) return undefined;
  const { stripe_event_id: _eventId, ...metadata } = mapped.record.metadata ?? {};
  const customer = customers.get(event.customer ?? '');
  const data = {
    ...mapped.record,
    ...(event.mrrImpact !== undefined && { mrr_impact: event.mrrImpact }),
    metadata: {
      ...metadata,
      source: 'stripe-import',
      ...(customer?.name && { name: customer.name }),
      ...(customer?.email && { email: customer.email }),
    },
  };
  const checked = validatePayload('revenue', data);
  if (!checked.ok) return undefined;
  return {
    id: recordIdFor(`stripe-import:${projectId}:${event.objectId}`),
    type: 'revenue',
    project_id: projectId,
    received_at: receivedAt,
    timestamp: checked.value.timestamp as number,
    client_timestamp: checked.value.timestamp as number,
    timestamp_clamped: false,
    user_agent: null,
    visitor_fingerprint_derived: false,
    country: null,
    data: checked.value,
  };
}

interface ImportEvent {
  event: StripeEventLike;
  objectId: string;
  customer?: string;
  mrrImpact?: number;
}

const idOf = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : ((value as { id?: string } | null)?.id ?? undefined);

function eventFor(list: Exclude<StripeList, 'customers'>, object: unknown): ImportEvent | undefined {
  switch (list) {
    case 'invoices': {
      const invoice = object as Stripe.Invoice & { id: string };
      const paidAt = invoice.status_transitions?.paid_at ?? invoice.created;
      // A plan change's MRR movement comes with customer.subscription.updated, which an import cannot read:
      // the proration lines of its invoice give it instead (new items' monthly amount − the old ones').
      const change =
        invoice.billing_reason === 'subscription_update'
          ? prorationMrr(invoice as unknown as Parameters<typeof prorationMrr>[0])
          : undefined;
      return {
        event: {
          id: `import:${invoice.id}`,
          type: 'invoice.paid',
          created: paidAt,
          data: { object: invoice },
        },
        objectId: invoice.id,
        customer: idOf(invoice.customer),
        ...(change !== undefined && { mrrImpact: fromMinorUnits(change, invoice.currency) }),
      };
    }
    case 'subscriptions': {
      const subscription = object as Stripe.Subscription;
      // Only an ended subscription has a record of its own (its churn); its start is its first invoice.
      if (subscription.status !== 'canceled' || !subscription.ended_at) return undefined;
      return {
        event: {
          id: `import:${subscription.id}:ended`,
          type: 'customer.subscription.deleted',
          created: subscription.ended_at,
          data: { object: subscription },
        },
        objectId: `${subscription.id}:ended`,
        customer: idOf(subscription.customer),
      };
    }
    case 'refunds': {
      const refund = object as Stripe.Refund;
      const charge = refund.charge;
      if (refund.status !== 'succeeded' || !charge || typeof charge === 'string') return undefined;
      // The webhook's transaction id is the charge with its refunded total once this refund was made: the
      // charge's succeeded refunds up to this one (its total now, when its refunds were not expanded).
      const listed = charge.refunds?.data;
      const refundedThen = listed?.length
        ? listed
            .filter((r) => r.status === 'succeeded' && (r.created < refund.created || r.id === refund.id))
            .reduce((sum, r) => sum + r.amount, 0)
        : charge.amount_refunded;
      return {
        event: {
          id: `import:${refund.id}`,
          type: 'charge.refunded',
          created: refund.created,
          data: { object: { ...charge, amount_refunded: refundedThen, refunds: { data: [refund] } } },
        },
        objectId: refund.id,
        customer: idOf(charge.customer),
      };
    }
  }
}

/** Where a project's import position is kept between runs. */
export const checkpointFile = (config: TallyConfig, projectId: string): string =>
  join(config.dataDir, 'stripe-import', `${encodeURIComponent(projectId)}.json`);

function readCheckpoint(file: string): StripeCheckpoint {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as StripeCheckpoint;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
}

function writeCheckpoint(file: string, checkpoint: StripeCheckpoint): void {
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(`${file}.tmp`, `${JSON.stringify(checkpoint)}\n`);
  renameSync(`${file}.tmp`, file);
}

const KEY_OPTIONS = ['key', 'secret-key', 'api-key', 'stripe-key'] as const;

/**
 * The Stripe secret key: STRIPE_SECRET_KEY, else the first line of stdin (`fd`) when it is not a terminal.
 * Never an argument: it would stay in the shell's history and the process list.
 */
export function readStripeKey(env: NodeJS.ProcessEnv, fd = 0, isTTY = Boolean(process.stdin.isTTY)): string {
  const fromEnv = env.STRIPE_SECRET_KEY?.trim();
  if (fromEnv) return fromEnv;
  if (!isTTY) {
    const line = readFileSync(fd, 'utf8').split('\n')[0]?.trim();
    if (line) return line;
  }
  throw new UsageError('no Stripe secret key: set STRIPE_SECRET_KEY, or pipe the key on stdin');
}

/** `tally import stripe --project P [--dry-run] [--restart]`. */
export async function runImportStripe(
  config: TallyConfig,
  argv: string[],
  parseArgs: typeof ParseArgs,
): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      project: { type: 'string' },
      'dry-run': { type: 'boolean', default: false },
      restart: { type: 'boolean', default: false },
      ...Object.fromEntries(KEY_OPTIONS.map((name) => [name, { type: 'string' as const }])),
    },
  });
  const valuesByName = values as Record<string, unknown>;
  if (
    KEY_OPTIONS.some((name) => valuesByName[name] !== undefined) ||
    positionals.some((p) => /^[sr]k_/.test(p))
  )
    throw new UsageError(
      'the Stripe secret key is never taken as an argument (it would stay in the shell history and the process ' +
        'list): set STRIPE_SECRET_KEY, or pipe it on stdin',
    );
  if (!values.project || positionals.length > 0)
    throw new UsageError(
      'tally import stripe --project P [--dry-run] [--restart] (key: STRIPE_SECRET_KEY or stdin)',
    );
  const projectId = values.project;
  const key = readStripeKey(process.env);
  // STRIPE_API_BASE points the client at a Stripe-compatible endpoint (stripe-mock, a test server).
  const base = process.env.STRIPE_API_BASE ? new URL(process.env.STRIPE_API_BASE) : undefined;
  const stripe = new Stripe(key, {
    maxNetworkRetries: 2,
    ...(base && {
      host: base.hostname,
      port: base.port || (base.protocol === 'https:' ? 443 : 80),
      protocol: base.protocol === 'http:' ? 'http' : 'https',
    }),
  });
  const dryRun = values['dry-run'] ?? false;
  const file = checkpointFile(config, projectId);
  if (values.restart && !dryRun) rmSync(file, { force: true });
  const checkpoint = values.restart ? {} : readCheckpoint(file);
  if (Object.keys(checkpoint).length > 0)
    process.stderr.write(`continuing the import interrupted earlier (${file}; --restart starts over)\n`);

  let log: RecordLogWriter | undefined;
  if (!dryRun) log = await openImportLog(config);
  const progress = progressLine();
  let counts: StripeImportCounts;
  try {
    counts = await importStripe(stripe, {
      projectId,
      checkpoint,
      progress: progress.update,
      ...(log && {
        land: (records: Array<IngestRecordOf<'revenue'>>) =>
          appendRevenueRecords(log as RecordLogWriter, records),
        saveCheckpoint: (next: StripeCheckpoint) => writeCheckpoint(file, next),
      }),
    });
  } catch (error) {
    progress.end();
    throw new Error(
      `the import stopped: ${(error as Error).message}${dryRun ? '' : '; run it again to continue where it stopped'}`,
    );
  } finally {
    await log?.close();
  }
  progress.end();
  if (!dryRun) rmSync(file, { force: true });
  const total = Object.values(counts.records).reduce((a, b) => a + b, 0);
  const kinds = Object.entries(counts.records)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([kind, n]) => `${n} ${kind}`)
    .join(', ');
  process.stdout.write(
    dryRun
      ? `would import ${total} revenue record(s) into ${projectId}${kinds && ` (${kinds})`}; ${counts.skipped} object(s) carry none\n`
      : `appended ${total} revenue record(s) for ${projectId} to the record log${kinds && ` (${kinds})`}; ` +
          'the revenue consumer lands them (a record already landed is skipped by its id or transaction id)\n',
  );
  return 0;
}

/**
 * Progress on stderr: one line rewritten in place on a terminal, a line per page otherwise (a log file keeps
 * every line, so no control characters).
 */
function progressLine(stream: NodeJS.WriteStream = process.stderr) {
  const tty = Boolean(stream.isTTY);
  let shown = false;
  const text = (c: StripeImportCounts) =>
    `stripe: ${c.read.customers} customers, ${c.read.subscriptions} subscriptions, ${c.read.invoices} invoices, ` +
    `${c.read.refunds} refunds read; ${Object.values(c.records).reduce((a, b) => a + b, 0)} records`;
  return {
    update(counts: StripeImportCounts) {
      shown = true;
      stream.write(tty ? `\r\x1b[2K${text(counts)}` : `${text(counts)}\n`);
    },
    end() {
      if (tty && shown) stream.write('\n');
    },
  };
}
