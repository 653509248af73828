// The benchmark's traffic: a realistic mix of the four record types (70% pageview, 20% event, 5% identify,
// 5% revenue by default) as the SDKs send them — browser records from @tally/core with a public token, a
// browser's headers and User-Agent and a client-chosen record id; revenue from a server with a secret
// token — spread over several projects and client IPs (X-Forwarded-For from a trusted proxy).
// Requests are prepared once as templates; each request only fills in a fresh record id (and, for
// revenue, a fresh transaction id, which names its customer too: every payment comes from a customer of
// its own, as at a business with many customers; with the customer of the template, 50 customers each
// paid several times a second, and each payment recomputed a history that grew all along), so the load
// generator spends its CPU on sending, not on building.

export type RecordKind = 'pageview' | 'event' | 'identify' | 'revenue';
export const DEFAULT_MIX: Record<RecordKind, number> = { pageview: 70, event: 20, identify: 5, revenue: 5 };

export interface ProjectTokens {
  project: string;
  publicToken: string;
  secretToken: string;
}

/** A request with holes: `parts` alternate literal text and placeholders (`id`, `txn`). */
export interface RequestTemplate {
  kind: RecordKind;
  headers: Record<string, string>;
  parts: string[];
}

export interface WorkloadOptions {
  tokens: readonly ProjectTokens[];
  /** Distinct client IPs sent as X-Forwarded-For (0: none, every request comes from 127.0.0.1). */
  clientIps: number;
  /** Templates to prepare (cycled through); more means more variety, not more memory per request. */
  size?: number;
  mix?: Record<RecordKind, number>;
  /** Seed of the pseudo-random choices, so that two runs send the same traffic. */
  seed?: number;
}

const ID = '@@id@@';
const TXN = '@@txn@@';

const USER_AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.82 Mobile Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.2478.67',
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/123.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
];
const SERVER_AGENT = 'tally-revenue/0.1.0 node/20.19.0';
const LOCALES = ['en-US', 'en-GB', 'de-DE', 'fr-FR', 'es-ES', 'pt-BR', 'ja-JP', 'nl-NL'];
export const PAGES = [
  ['/', 'Shop Example — Analytics for teams that ship'],
  ['/pricing', 'Pricing — plans for teams of every size | Shop Example'],
  ['/features/dashboards', 'Dashboards: every metric on one screen | Shop Example'],
  ['/blog/2026/05/cookieless-analytics-without-the-guesswork', 'Cookieless analytics without the guesswork'],
  ['/docs/getting-started/install', 'Install the tracker — Shop Example docs'],
  ['/signup', 'Create your account | Shop Example'],
  ['/customers/acme', 'How Acme doubled its trial conversion | Shop Example'],
  ['/integrations/stripe', 'Stripe integration — revenue next to traffic | Shop Example'],
] as const;
export const REFERRERS = [
  null,
  null,
  'https://www.google.com/',
  'https://news.ycombinator.com/item?id=40123456',
  'https://t.co/Ab12Cd34Ef',
  'https://www.bing.com/search?q=self+hosted+analytics',
  'https://github.com/tally/tally',
];
export const CAMPAIGNS = [
  null,
  null,
  null,
  ['newsletter', 'email', 'spring_sale'],
  ['google', 'cpc', 'brand_2026'],
  ['linkedin', 'social', 'launch_week'],
] as const;
export const EVENTS = [
  ['signup_clicked', { plan: 'pro', position: 'hero', variant: 'b' }],
  ['plan_selected', { plan: 'team', seats: 12, interval: 'yearly' }],
  ['video_played', { video: 'product-tour', seconds: 42 }],
  ['docs_search', { query: 'webhook retries', results: 7 }],
  ['checkout_started', { plan: 'pro', currency: 'EUR', coupon: null }],
] as const;

/** A small deterministic PRNG (mulberry32): the same seed gives the same traffic. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function buildTemplates(options: WorkloadOptions): RequestTemplate[] {
  const size = options.size ?? 1000;
  const mix = options.mix ?? DEFAULT_MIX;
  const rand = random(options.seed ?? 6);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)] as T;
  const hex = (n: number) => Array.from({ length: n }, () => Math.floor(rand() * 16).toString(16)).join('');
  const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`;
  const now = Date.now();

  // Exactly the mix's share of each kind, in a shuffled order.
  const total = Object.values(mix).reduce((a, b) => a + b, 0);
  const kinds: RecordKind[] = [];
  for (const [kind, share] of Object.entries(mix) as Array<[RecordKind, number]>) {
    for (let i = 0; i < Math.round((share / total) * size); i++) kinds.push(kind);
  }
  for (let i = kinds.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [kinds[i], kinds[j]] = [kinds[j] as RecordKind, kinds[i] as RecordKind];
  }

  return kinds.map((kind) => {
    const project = pick(options.tokens);
    const site = `https://${project.project}.example.com`;
    const [path, title] = pick(PAGES);
    const campaign = pick(CAMPAIGNS);
    const query = campaign
      ? `?utm_source=${campaign[0]}&utm_medium=${campaign[1]}&utm_campaign=${campaign[2]}`
      : '';
    const url = `${site}${path}${query}`;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'x-api-token': kind === 'revenue' ? project.secretToken : project.publicToken,
    };
    if (options.clientIps > 0) {
      const n = Math.floor(rand() * options.clientIps);
      headers['x-forwarded-for'] = `198.51.${(n >> 8) & 255}.${n & 255}`;
    }
    if (kind === 'revenue') {
      headers['user-agent'] = SERVER_AGENT;
    } else {
      Object.assign(headers, {
        'user-agent': pick(USER_AGENTS),
        accept: '*/*',
        'accept-language': `${pick(LOCALES)},en;q=0.8`,
        origin: site,
        referer: url,
      });
    }
    const sessionId = uuid();
    const timestamp = now - Math.floor(rand() * 5000);
    let data: Record<string, unknown>;
    switch (kind) {
      case 'pageview':
        data = {
          url,
          path,
          referrer: pick(REFERRERS),
          title,
          locale: pick(LOCALES),
          utm_source: campaign?.[0],
          utm_medium: campaign?.[1],
          utm_campaign: campaign?.[2],
          session_id: sessionId,
          timestamp,
        };
        break;
      case 'event': {
        const [name, eventData] = pick(EVENTS);
        data = { event_name: name, event_data: eventData, url, path, session_id: sessionId, timestamp };
        break;
      }
      case 'identify':
        data = { customer_id: `cus_${hex(14)}`, session_id: sessionId, timestamp };
        break;
      case 'revenue': {
        const plan = pick(['starter', 'pro', 'team'] as const);
        const amount = { starter: 19, pro: 49, team: 199 }[plan];
        data = {
          visitor_fingerprint: `fp_${hex(16)}`,
          session_id: sessionId,
          customer_id: `cus_${TXN}`,
          amount,
          currency: pick(['USD', 'EUR', 'GBP'] as const),
          transaction_id: `in_${TXN}`,
          event_type: pick(['subscription', 'renewal', 'purchase', 'upgrade'] as const),
          mrr_impact: amount,
          is_recurring: true,
          customer_subscription_id: `sub_${hex(14)}`,
          payment_processor: 'stripe',
          timestamp,
          metadata: { plan, interval: 'monthly', coupon: pick(['', 'SPRING', 'LAUNCH20']), seats: 3 },
        };
        break;
      }
    }
    const body = JSON.stringify({ type: kind, id: ID, data });
    return { kind, headers, parts: body.split(/(@@id@@|@@txn@@)/) };
  });
}

/**
 * Fills a template's holes for the `seq`-th request of a generator: a UUID record id made unique by
 * `prefix` (8 hex digits, one per generator process) and `seq`; and a transaction id made of both.
 */
export function renderBody(template: RequestTemplate, prefix: string, seq: number): string {
  const parts = template.parts;
  const counter = seq.toString(16).padStart(12, '0');
  let body = parts[0] as string;
  for (let i = 1; i < parts.length; i += 2) {
    const hole = parts[i];
    body += hole === ID ? `${prefix}-0000-7000-8000-${counter}` : `${prefix}${counter}`;
    body += parts[i + 1] as string;
  }
  return body;
}

/** Average request body size of the templates, in bytes (ids filled in). */
export function averageBodyBytes(templates: readonly RequestTemplate[]): Record<RecordKind | 'all', number> {
  const sums = new Map<string, { bytes: number; n: number }>();
  for (const t of templates) {
    const bytes = Buffer.byteLength(renderBody(t, '00000000', 1));
    for (const key of [t.kind, 'all']) {
      const s = sums.get(key) ?? { bytes: 0, n: 0 };
      s.bytes += bytes;
      s.n++;
      sums.set(key, s);
    }
  }
  return Object.fromEntries([...sums].map(([k, s]) => [k, Math.round(s.bytes / s.n)])) as Record<
    RecordKind | 'all',
    number
  >;
}
