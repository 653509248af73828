// Runs the Stripe webhook example as a small HTTP server:
//   STRIPE_WEBHOOK_SECRET=whsec_… TALLY_ENDPOINT=http://localhost:8080 TALLY_SECRET_TOKEN=sec_… \
//   node server.ts        # in a project with `stripe` and `@tally/revenue` installed; listens on :4242, path /stripe/webhook
// (in this repository: node --conditions=@tally/source --import tsx examples/stripe-webhook/server.ts).
// Its port is STRIPE_EXAMPLE_PORT (default 4242; 0 for any free one) and its address STRIPE_EXAMPLE_HOST
// (default 0.0.0.0), not PORT and HOST: those are Tally's own, and the two often run side by side on one
// machine with one environment.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { RevenueClient } from '@tally/revenue';
import Stripe from 'stripe';
import { stripeWebhookHandler } from './handler.ts';

export interface WebhookServerConfig {
  webhookSecret: string;
  /** A client for Tally; build one with `revenueClientForWebhooks` unless a test brings its own. */
  revenue: RevenueClient;
  port?: number;
  host?: string;
  log?: (message: string) => void;
}

/** Settings that fit a webhook's 10-second budget: short attempts, short waits, no hour-long Retry-After. */
export const revenueClientForWebhooks = (endpoint: string, token: string) =>
  new RevenueClient({
    endpoint,
    token,
    timeout: 3000,
    maxRetries: 3,
    retryBackoff: 250,
    maxRetryAfter: 3000,
  });

export async function startWebhookServer(
  config: WebhookServerConfig,
): Promise<{ url: string; server: Server }> {
  // constructEvent needs no API key; a Stripe secret key is only needed for API calls, which this makes none of.
  const stripe = new Stripe(process.env.STRIPE_SECRET_KEY ?? 'sk_unused');
  const handle = stripeWebhookHandler({
    stripe,
    webhookSecret: config.webhookSecret,
    revenue: config.revenue,
    ...(config.log ? { log: config.log } : {}),
  });
  const server = createServer((request, response) => {
    if (new URL(request.url ?? '/', 'http://localhost').pathname !== '/stripe/webhook') {
      response.writeHead(404).end();
      return;
    }
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500).end();
      console.error(error);
    });
  });
  await new Promise<void>((resolve) => server.listen(config.port ?? 4242, config.host ?? '0.0.0.0', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/stripe/webhook`, server };
}

/** The example's port from STRIPE_EXAMPLE_PORT: default 4242, 0 for any free port. */
export function portFrom(value: string | undefined): number {
  if (value === undefined || value === '') return 4242;
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65_535) {
    throw new Error(`STRIPE_EXAMPLE_PORT must be a port number (0–65535), got "${value}"`);
  }
  return Number(value);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const need = (name: string) => {
    const value = process.env[name];
    if (!value) throw new Error(`set ${name}`);
    return value;
  };
  const { url } = await startWebhookServer({
    webhookSecret: need('STRIPE_WEBHOOK_SECRET'),
    revenue: revenueClientForWebhooks(need('TALLY_ENDPOINT'), need('TALLY_SECRET_TOKEN')),
    port: portFrom(process.env.STRIPE_EXAMPLE_PORT),
    host: process.env.STRIPE_EXAMPLE_HOST || '0.0.0.0',
  });
  console.log(`Stripe webhook for Tally listening on ${url}`);
}
