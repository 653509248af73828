// A Stripe webhook endpoint that forwards revenue to Tally, following the spec's guidance for payment
// webhooks: verify Stripe's signature, answer within 10 seconds, and answer 2xx only once Tally has
// accepted the record (a non-2xx makes Stripe deliver the event again later, for up to three days).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type RevenueClient, revenueFromStripeEvent, type StripeEventLike, TallyError } from '@tally/revenue';
import type Stripe from 'stripe';

export interface StripeWebhookOptions {
  /** A Stripe client; only its `webhooks.constructEvent` is used (no API call is made). */
  stripe: Stripe;
  /** The endpoint's signing secret (`whsec_…`) from the Stripe dashboard or `stripe listen`. */
  webhookSecret: string;
  revenue: RevenueClient;
  /** Time the Tally send may take, retries included (default 8 s, inside Stripe's 10 s). */
  deadlineMs?: number;
  log?: (message: string) => void;
}

/** Largest body read: Stripe events are a few kB; anything far larger is not Stripe. */
const MAX_BODY_BYTES = 1024 * 1024;

export function stripeWebhookHandler(options: StripeWebhookOptions) {
  const { stripe, webhookSecret, revenue, deadlineMs = 8000, log = console.log } = options;
  const reply = (response: ServerResponse, status: number, body: unknown): void => {
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };

  return async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    if (request.method !== 'POST') return reply(response, 405, { error: 'POST only' });
    const raw = await readBody(request);
    if (raw === undefined) return reply(response, 413, { error: 'body too large' });

    // The signature covers the raw bytes: verify before parsing anything.
    let event: Stripe.Event;
    try {
      event = stripe.webhooks.constructEvent(
        raw,
        String(request.headers['stripe-signature'] ?? ''),
        webhookSecret,
      );
    } catch (error) {
      log(`stripe webhook: signature refused: ${(error as Error).message}`);
      return reply(response, 400, { error: 'invalid signature' });
    }

    const mapped = revenueFromStripeEvent(event as unknown as StripeEventLike);
    if (!mapped.ok) return reply(response, 200, { received: true, ignored: mapped.ignored });

    try {
      // The record id comes from the event id: a redelivered event keeps it, so Tally can drop the duplicate.
      await revenue.track(mapped.record, { id: mapped.id, signal: AbortSignal.timeout(deadlineMs) });
      return reply(response, 200, { received: true, id: mapped.id });
    } catch (error) {
      // Not accepted: answer non-2xx so that Stripe delivers the event again. 503 when a later try may work
      // (Tally busy or unreachable), 500 when it needs a fix first (a bad token, a record the contract refuses).
      const retryable = !(error instanceof TallyError) || error.retryable;
      log(`stripe webhook: ${event.type} ${event.id} not sent to Tally: ${(error as Error).message}`);
      return reply(response, retryable ? 503 : 500, { error: 'revenue not recorded; deliver again later' });
    }
  };
}

async function readBody(request: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
