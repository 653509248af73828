// A server of a project that installed @tally/revenue from its tarball, as an ES module under plain `node`
// (test/packages-install.test.ts runs it on the oldest Node.js the package names, and type-checks it with
// checkJs: the @ts-expect-error lines fail the check if the package's types are missing or loose).
import { RevenueClient, RevenueValidationError } from '@tally/revenue';

const { TALLY_ENDPOINT = '', TALLY_TOKEN = '', RECORD_ID = '', CUSTOMER_ID = '' } = process.env;
const tally = new RevenueClient({ endpoint: TALLY_ENDPOINT, token: TALLY_TOKEN, maxRetries: 1 });

// @ts-expect-error: a record without customer_id is not a RevenueEventInput
const invalid = tally.purchase({ amount: 1, currency: 'USD', transaction_id: 'x' });
const refused = await invalid.then(
  () => 'sent',
  (error) => (error instanceof RevenueValidationError ? 'refused' : String(error)),
);

/** @type {import('@tally/revenue').RevenueData} */
const record = {
  event_type: 'purchase',
  customer_id: CUSTOMER_ID,
  visitor_fingerprint: 'fp_installed',
  session_id: 's_installed',
  amount: 19.9,
  currency: 'eur',
  transaction_id: `tx_${RECORD_ID}`,
};
const sent = await tally.track(record, { id: RECORD_ID });
console.log(JSON.stringify({ ...sent, refused, module: 'esm', node: process.version }));
