// What the revenue view shows where no customer has revenue in its currency (a project that has never sent
// revenue): how to send it, instead of a page of zeros. Revenue comes from a server with a secret token,
// which only the command line creates (the dashboard's API creates public tokens only); then a curl record to
// try the token and the address, and @tally/revenue's client (packages/revenue/README.md). The address is
// the gateway's, as the install guide gives it to those who may edit; then the `tally import stripe` command
// for the past (docs/revenue.md, "Importing from Stripe"). A share link that includes revenue only says
// that there is none yet. The view checks every 10 seconds whether the first record arrived.
import type { Api } from '../api/client.ts';
import type { Install, Project } from '../api/types.ts';
import { useQuery } from '../api/use-query.ts';
import { Snippet } from '../ui/install-guide.tsx';
import { Loading } from '../ui/messages.tsx';
import { useInterval } from '../ui/use-interval.ts';

export function RevenueOnboarding(props: { api: Api; project: Project; currency: string; onCheck(): void }) {
  const { project, currency } = props;
  const install = useQuery<Install>(
    props.api,
    project.access.can_edit ? `/projects/${encodeURIComponent(project.id)}/install` : null,
  );
  useInterval(props.onCheck, 10_000);
  if (!project.access.can_edit) {
    return (
      <section class="card" aria-labelledby="revenue-onboarding-title">
        <h2 id="revenue-onboarding-title">No revenue yet</h2>
        <p class="empty" id="revenue-empty">
          No revenue in {currency} has reached this project yet.
        </p>
      </section>
    );
  }
  if (!install.data && !install.error) return <Loading />;
  // The gateway's address as the install guide has it; a stand-in if it could not be read.
  const endpoint = install.data?.gateway_url ?? 'https://tally.example.com';
  const example = {
    customer_id: 'cus_42',
    visitor_fingerprint: 'cus_42',
    session_id: 'cus_42',
    amount: 49,
    currency,
    transaction_id: 'in_1Q2w3E',
    event_type: 'subscription',
    mrr_impact: 49,
    is_recurring: true,
    metadata: { plan: 'pro', interval: 'monthly' },
  };
  const curl =
    `curl -i ${endpoint}/api/ingest -H 'Content-Type: application/json' \\\n` +
    `  -H "X-API-Token: $TALLY_SECRET_TOKEN" \\\n` +
    `  -d '${JSON.stringify({ type: 'revenue', data: example })}'`;
  const client =
    `import { RevenueClient } from '@tally/revenue';\n\n` +
    `const tally = new RevenueClient({ token: process.env.TALLY_SECRET_TOKEN, endpoint: '${endpoint}' });\n\n` +
    `await tally.subscription({\n` +
    `  customer_id: 'cus_42', // your customer's id, the one the browser sends with identify()\n` +
    `  visitor_fingerprint: 'cus_42', // any stable value\n` +
    `  session_id: 'cus_42',\n` +
    `  amount: 49,\n` +
    `  currency: '${currency}',\n` +
    `  transaction_id: 'in_1Q2w3E', // your invoice or payment id: a record sent twice counts once\n` +
    `  mrr_impact: 49,\n` +
    `  is_recurring: true,\n` +
    `  metadata: { plan: 'pro', interval: 'monthly' },\n` +
    `});`;
  return (
    <section class="card install revenue-onboarding" aria-labelledby="revenue-onboarding-title">
      <h2 id="revenue-onboarding-title">Send revenue to {project.id}</h2>
      <p id="revenue-empty">
        No revenue in {currency} has reached this project yet. Revenue records come from your server (your
        billing code or a payment webhook), never from the browser. Once the first one lands, MRR, churn,
        attribution and the customers appear here. Sending another currency? Choose it above.
      </p>
      <h3>1. A secret token</h3>
      <p>
        Revenue needs a secret <code>sec_…</code> token. Create one on the server Tally runs on (the dashboard
        cannot: it makes public tokens only, which are refused for revenue):
      </p>
      <Snippet text={`npx tally tokens create --project ${project.id} --kind secret`} label="token command" />
      <p class="hint">
        It prints the whole token once; Tally keeps only its hash. Keep it on your server, in an environment
        variable such as <code>TALLY_SECRET_TOKEN</code>, never in a web page.
      </p>
      <h3>2. Send a record</h3>
      <p>
        Try the token and the address with curl (this sends a real record: use a test project, or a real
        payment):
      </p>
      <Snippet text={curl} label="curl example" />
      <p>
        From Node.js, <code>@tally/revenue</code> (<code>npm install @tally/revenue</code>) checks each record
        before sending and retries what can succeed later:
      </p>
      <Snippet text={client} label="@tally/revenue example" />
      <p class="hint">
        With Stripe, <code>revenueFromStripeEvent(event)</code> of <code>@tally/revenue</code> turns webhook
        events into these records. In the browser, <code>identify</code> the customer with the same id, so
        that its revenue is credited to the visits that brought it.
      </p>
      <h3>3. Bring your history</h3>
      <p>
        Revenue before the first record is not known to Tally. With Stripe, import it from Stripe's API on the
        server Tally runs on (stop Tally first when it uses its embedded record log); a re-run, or a webhook
        of an imported payment, adds nothing twice:
      </p>
      <Snippet
        text={`STRIPE_SECRET_KEY=rk_live_… npx tally import stripe --project ${project.id}`}
        label="Stripe import command"
      />
      <p class="hint">
        The key only from the environment or stdin, never as an argument; <code>--dry-run</code> prints what
        it would import. From another billing system, <code>npx tally import csv</code> reads a CSV export.
      </p>
      <output class="hint">Waiting for the first revenue record in {currency}…</output>
    </section>
  );
}
