// Sends a Stripe event to the webhook example signed as Stripe signs it, to try the example offline: no
// Stripe account and no `stripe listen`, only a signing secret of your own shared with the server. The
// signature comes from the `stripe` package's own test helper (`webhooks.generateTestHeaderString`); the
// end-to-end test delivers its events with deliverSigned too.
//   STRIPE_WEBHOOK_SECRET=whsec_… node --conditions=@tally/source --import tsx examples/stripe-webhook/send-fixture.ts \
//     packages/revenue/src/fixtures/stripe/invoice.paid.subscription_create.json [webhook URL]
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import Stripe from 'stripe';

// Signing needs no API key: the key is only for API calls, which this makes none of.
const stripe = new Stripe('sk_unused');

export interface DeliveryOptions {
  /** A `Stripe-Signature` header to send instead of a valid one (tests of forged signatures). */
  signature?: string;
  /** Time the delivery may take (default 10 s, Stripe's own limit). */
  timeoutMs?: number;
}

/** POSTs `payload` (the raw JSON of a Stripe event) to `url` with a Stripe signature made with `secret`. */
export function deliverSigned(
  url: string,
  payload: string,
  secret: string,
  options: DeliveryOptions = {},
): Promise<Response> {
  const signature = options.signature ?? stripe.webhooks.generateTestHeaderString({ payload, secret });
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': signature },
    body: payload,
    signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [file, url = `http://127.0.0.1:${process.env.STRIPE_EXAMPLE_PORT || 4242}/stripe/webhook`] =
    process.argv.slice(2);
  const secret = process.env.STRIPE_WEBHOOK_SECRET;
  if (!file || !secret) {
    console.error('usage: STRIPE_WEBHOOK_SECRET=whsec_… send-fixture.ts <event.json> [webhook URL]');
    process.exit(2);
  }
  const response = await deliverSigned(url, readFileSync(file, 'utf8'), secret);
  console.log(response.status, await response.text());
  if (!response.ok) process.exitCode = 1;
}
