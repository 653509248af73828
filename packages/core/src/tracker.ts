// The tracker's platform-agnostic core: builds pageview, event and identify records, keeps the session, and
// sends records through a queue that retries with backoff and honours Retry-After. Everything that touches
// a platform (HTTP, the unload beacon, timers, clock, randomness, the current page, session storage) comes
// in through TrackerPlatform, so this file runs unchanged in a browser and in unit tests.
// Only types are imported from @tally/contract: its validator (Ajv) must never reach the browser bundle.
import { backoffDelay, isRetryableStatus, retryAfterMs } from '@tally/backoff';
import type { EventData, IdentifyData, PageviewData } from '@tally/contract';

export interface TrackerConfig {
  /** A public (`pub_…`) token. */
  token: string;
  /** Base URL of the Tally server (`https://tally.example.com`) or the full `…/api/ingest` URL. */
  endpoint: string;
  /** Retries of one record after a network error, a 5xx or a 429 before it is dropped (default 5). */
  maxRetries?: number;
  /** Base of the exponential backoff in ms (default 1000): about 1 s, 2 s, 4 s … with jitter, capped at 30 s. */
  retryBackoff?: number;
  /** Logs every send and drop to the console. */
  debug?: boolean;
}

/** The current page, as the platform sees it. */
export interface PageInfo {
  url: string;
  path: string;
  referrer?: string | null;
  title?: string | null;
  locale?: string | null;
  /** Width of the screen in CSS pixels, sent with pageviews (the dashboard's screen sizes). */
  screen_width?: number | null;
}

export interface SendResult {
  status: number;
  /** The Retry-After header, when the response had one. */
  retryAfter: string | null;
}

export interface Session {
  id: string;
  /** Time of the last activity, in ms. */
  lastActive: number;
}

/** Where the session lives. The default is memory only: nothing is written to cookies or localStorage. */
export interface SessionStore {
  get(): Session | undefined;
  set(session: Session | undefined): void;
}

export interface TrackerPlatform {
  /**
   * POSTs a JSON envelope (the token is in it; a platform may also put `token` in X-API-Token); resolves with
   * the status, rejects on network errors.
   */
  post(url: string, token: string, body: string): Promise<SendResult>;
  /** Hands an envelope to the platform to send even as the page goes away; false if refused. */
  beacon(url: string, body: string): boolean;
  now(): number;
  setTimer(callback: () => void, ms: number): void;
  /** A number in [0, 1), for the backoff's jitter. */
  random(): number;
  /** A random UUID: the record id, which stays the same on every retry so that retries are idempotent. */
  uuid(): string;
  page(): PageInfo;
  session?: SessionStore;
  /**
   * Whether nothing may be sent now (the visitor opted out, Do Not Track, a local page, an excluded path):
   * asked before each record is queued, so that opting out takes effect at once.
   */
  blocked?(): boolean;
}

export interface PageviewOptions {
  url?: string;
  path?: string;
  title?: string;
  referrer?: string | null;
}

export interface Tracker {
  pageview(options?: PageviewOptions): void;
  event(name: string, data?: Record<string, unknown>): void;
  /** Links this visitor and session to your customer id; call it after the user signs in. */
  identify(customerId: string): void;
  /** Starts a new session (for example after sign-out). */
  reset(): void;
  getSessionId(): string;
  /** Sends every queued record with the beacon; called when the page is hidden or unloaded. */
  flush(): void;
  /** Records waiting to be sent or retried (including the one in flight). */
  pending(): number;
}

/** A session ends after 30 minutes without activity. */
export const SESSION_TIMEOUT_MS = 30 * 60 * 1000;

type Outgoing =
  | { type: 'pageview'; data: PageviewData }
  | { type: 'event'; data: EventData }
  | { type: 'identify'; data: IdentifyData };
type Item = Outgoing & { id: string; tries: number };

export const ingestUrl = (endpoint: string): string =>
  /\/api\/ingest$/.test(endpoint) ? endpoint : `${endpoint.replace(/\/+$/, '')}/api/ingest`;

export function createTracker(config: TrackerConfig, platform: TrackerPlatform): Tracker {
  const url = ingestUrl(config.endpoint);
  const { token } = config;
  const maxRetries = config.maxRetries ?? 5;
  const base = config.retryBackoff ?? 1000;
  let memory: Session | undefined;
  const store: SessionStore = platform.session ?? {
    get: () => memory,
    set: (session) => {
      memory = session;
    },
  };
  const queue: Item[] = [];
  let inFlight = false;
  // Nothing is sent before this time: a backoff after a failure, or the server's Retry-After after a 429.
  // The rate limit is per client, so a 429 pauses the whole queue, not only the refused record.
  let waitUntil = 0;
  let rateLimited = false;

  const log = (...args: unknown[]) => config.debug && console.info('[tally]', ...args);

  // A tracker failure must never reach the host page: every entry point runs through this.
  const guard =
    <A extends unknown[]>(fn: (...args: A) => void) =>
    (...args: A) => {
      try {
        fn(...args);
      } catch (error) {
        log('error', error);
      }
    };

  function session(touch: boolean): string {
    const now = platform.now();
    let current = store.get();
    if (!current || now - current.lastActive > SESSION_TIMEOUT_MS)
      current = { id: platform.uuid(), lastActive: now };
    if (touch) current.lastActive = now;
    store.set(current);
    return current.id;
  }

  function enqueue(record: Outgoing) {
    if (platform.blocked?.()) return;
    Object.assign(record.data, { session_id: session(true), timestamp: platform.now() });
    queue.push({ ...record, id: platform.uuid(), tries: 0 });
    pump();
  }

  // The token travels in the envelope, so that a browser can send it as a simple text/plain request (no
  // CORS preflight) and the beacon can carry it.
  const envelope = (item: Item) => JSON.stringify({ type: item.type, token, id: item.id, data: item.data });

  function pump() {
    const item = queue[0];
    if (!item || inFlight || platform.now() < waitUntil) return;
    inFlight = true;
    // Through a promise so that a platform that throws synchronously is handled like a network error.
    Promise.resolve()
      .then(() => platform.post(url, token, envelope(item)))
      .then(
        (result) => settle(item, result),
        (error) => settle(item, undefined, error),
      );
  }

  /** After an attempt: `result` is undefined when the request failed on the network (retried like a 5xx). */
  function settle(item: Item, result: SendResult | undefined, error?: unknown) {
    inFlight = false;
    const status = result?.status ?? 0;
    const failed = !status || isRetryableStatus(status);
    // Logged: the type, the status (or the network error), and the delay before the retry if there is one.
    log(item.type, status || error);
    if (!failed || ++item.tries > maxRetries) {
      if (queue[0] === item) queue.shift();
    } else {
      const now = platform.now();
      rateLimited = status === 429;
      const delay =
        (rateLimited && retryAfterMs(result?.retryAfter, now)) ||
        backoffDelay(item.tries, base, platform.random());
      waitUntil = now + delay;
      platform.setTimer(() => {
        waitUntil = 0;
        pump();
      }, delay);
    }
    pump();
  }

  const utm = (pageUrl: string) => {
    const params = new URL(pageUrl).searchParams;
    const out: Record<string, string | undefined> = {};
    for (const key of ['source', 'medium', 'campaign', 'term', 'content'])
      out[`utm_${key}`] = params.get(`utm_${key}`) ?? undefined;
    return out;
  };

  return {
    pageview: guard((options: PageviewOptions = {}) => {
      const page = { ...platform.page(), ...options } as PageInfo;
      enqueue({ type: 'pageview', data: { ...page, ...utm(page.url) } as PageviewData });
    }),
    event: guard((name: string, data?: Record<string, unknown>) => {
      const { url: pageUrl, path } = platform.page();
      enqueue({
        type: 'event',
        data: { event_name: name, event_data: data, url: pageUrl, path } as EventData,
      });
    }),
    identify: guard((customerId: string) => {
      enqueue({ type: 'identify', data: { customer_id: customerId } as IdentifyData });
    }),
    reset: guard(() => store.set(undefined)),
    getSessionId: () => session(false),
    flush: guard(() => {
      // A Retry-After still in force would only earn another 429: those records are given up.
      if (rateLimited && platform.now() < waitUntil) return;
      // The record in flight is left to its own (keepalive) request.
      for (const item of queue.splice(inFlight ? 1 : 0)) {
        if (!platform.beacon(url, envelope(item))) platform.post(url, token, envelope(item)).catch(() => {});
      }
    }),
    pending: () => queue.length,
  };
}
