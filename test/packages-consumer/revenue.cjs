// The same server as revenue.mjs, in CommonJS: `require('@tally/revenue')` loads the package's CommonJS
// copy (Node 18 cannot require an ES module).
const { RevenueClient, RevenueValidationError } = require('@tally/revenue');

const { TALLY_ENDPOINT = '', TALLY_TOKEN = '', RECORD_ID = '', CUSTOMER_ID = '' } = process.env;
const tally = new RevenueClient({ endpoint: TALLY_ENDPOINT, token: TALLY_TOKEN, maxRetries: 1 });

async function main() {
  // @ts-expect-error: a record without customer_id is not a RevenueEventInput
  const invalid = tally.purchase({ amount: 1, currency: 'USD', transaction_id: 'x' });
  const refused = await invalid.then(
    () => 'sent',
    (error) => (error instanceof RevenueValidationError ? 'refused' : String(error)),
  );
  const sent = await tally.purchase(
    {
      customer_id: CUSTOMER_ID,
      visitor_fingerprint: 'fp_installed',
      session_id: 's_installed',
      amount: 19.9,
      currency: 'eur',
      transaction_id: `tx_${RECORD_ID}`,
    },
    { id: RECORD_ID },
  );
  console.log(JSON.stringify({ ...sent, refused, module: 'cjs', node: process.version }));
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
