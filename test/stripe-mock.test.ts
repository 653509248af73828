// `tally import stripe` against stripe-mock, Stripe's own API mock (infra/stripe-mock): every list call the
// import makes, with its paging parameters (`limit`, `starting_after` from a checkpoint) and filters
// (`status`, `expand`), must pass the mock's validation against Stripe's OpenAPI spec, and the pages it
// answers must be read to the end. The content of an import is tested in test/stripe-import.test.ts.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Stripe from 'stripe';
import { afterAll, expect, inject, it, vi } from 'vitest';
import { runCli } from '../packages/cli/src/cli.ts';
import { importStripe } from '../packages/cli/src/import-stripe.ts';

const dir = mkdtempSync(join(tmpdir(), 'tally-stripe-mock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const base = new URL(inject('stripeMockUrl'));
const client = () =>
  new Stripe('sk_test_123', { host: base.hostname, port: base.port, protocol: 'http', maxNetworkRetries: 0 });

it("makes list calls that stripe-mock's OpenAPI validation accepts, from the start and from a checkpoint", async () => {
  const seen: string[] = [];
  const stripe = client();
  stripe.on('request', (request: Stripe.RequestEvent) => seen.push(`${request.method} ${request.path}`));
  for (const checkpoint of [
    {},
    {
      subscriptions: { after: 'sub_123' },
      invoices: { after: 'in_123' },
      refunds: { after: 're_123' },
    },
  ]) {
    seen.length = 0;
    const counts = await importStripe(stripe, { projectId: 'shop', checkpoint, progress: () => {} });
    // The mock answers one object per list, and has_more false: each list is read once, to its end.
    expect(counts.read).toEqual({ customers: 1, subscriptions: 1, invoices: 1, refunds: 1 });
    expect(seen.map((s) => s.split('?')[0])).toEqual([
      'GET /v1/customers',
      'GET /v1/subscriptions',
      'GET /v1/invoices',
      'GET /v1/refunds',
    ]);
  }
  expect(seen.find((s) => s.startsWith('GET /v1/invoices'))).toContain('starting_after=in_123');
  // The validation is real: a parameter Stripe's spec does not allow is refused.
  await expect(
    stripe.invoices.list({ status: 'nonsense' as Stripe.InvoiceListParams.Status }),
  ).rejects.toThrow(/status/);
});

it('a dry run through the command line pages every list of stripe-mock', async () => {
  mkdirSync(join(dir, 'stripe-import'), { recursive: true });
  writeFileSync(join(dir, 'stripe-import', 'shop.json'), JSON.stringify({ invoices: { after: 'in_123' } }));
  vi.stubEnv('TALLY_DATA_DIR', dir);
  vi.stubEnv('TALLY_ENV_FILE', '/dev/null');
  vi.stubEnv('STRIPE_API_BASE', base.href);
  vi.stubEnv('STRIPE_SECRET_KEY', 'sk_test_123');
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr += String(chunk);
    return true;
  });
  try {
    expect(await runCli(['import', 'stripe', '--project', 'shop', '--dry-run'])).toBe(0);
  } finally {
    out.mockRestore();
    err.mockRestore();
    vi.unstubAllEnvs();
  }
  expect(stderr).toContain('continuing the import interrupted earlier');
  expect(stderr).toContain('stripe: 1 customers, 1 subscriptions, 1 invoices, 1 refunds read');
  expect(stdout).toMatch(/^would import \d+ revenue record\(s\) into shop/);
});
