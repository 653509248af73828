// The revenue client for servers: validates a revenue record against the wire contract before sending it,
// sends it with a secret token, and retries what may succeed later (429 after its Retry-After, 5xx, network
// errors, timeouts) with exponential backoff and jitter, keeping the same envelope id (and so the same
// transaction_id) on every attempt. Anything else (400, 401, 403, 413…) is thrown at once.
import { backoffDelay, retryAfterMs } from '@tally/backoff';
import type { RevenueData, RevenueEventType } from '@tally/contract';
import { validatePayload } from '@tally/contract';
import {
  RevenueValidationError,
  type TallyError,
  TallyHttpError,
  TallyNetworkError,
  TallyTimeoutError,
} from './errors.ts';
import { randomRecordId } from './record-id.ts';

export interface RevenueClientOptions {
  /** A secret (`sec_…`) token: revenue records are refused with a public one. */
  token: string;
  /** Base URL of the Tally server (`https://tally.example.com`) or the full `…/api/ingest` URL. */
  endpoint: string;
  /** Retries after the first attempt (default 3). */
  maxRetries?: number;
  /** Base of the exponential backoff in ms (default 500): about 0.5 s, 1 s, 2 s … with jitter, capped at 30 s. */
  retryBackoff?: number;
  /** Time one attempt may take, in ms (default 10,000). */
  timeout?: number;
  /**
   * Longest Retry-After the client waits for, in ms (default 60,000). A 429 asking for longer is thrown at
   * once (retryable, with `retryAfterMs`) rather than holding the caller for up to an hour.
   */
  maxRetryAfter?: number;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** Waits `ms`, rejecting early when `signal` aborts. Tests inject it to run retries without real waiting. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Source of the backoff's jitter, in [0, 1). */
  random?: () => number;
}

export interface TrackOptions {
  /** Envelope id (a UUID); default a random one, the same for every retry of this call. */
  id?: string;
  /** Aborts the send, retries included: e.g. `AbortSignal.timeout(8000)` to answer a webhook in time. */
  signal?: AbortSignal;
}

export interface TrackResult {
  /** The record id Tally keeps (the envelope id). */
  id: string;
  /** Attempts it took (1 when the first one was accepted). */
  attempts: number;
}

/** A revenue record without event_type, as the per-type helpers take it. */
export type RevenueEventInput = Omit<RevenueData, 'event_type'>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const defaultSleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

export class RevenueClient {
  readonly #url: string;
  readonly #token: string;
  readonly #maxRetries: number;
  readonly #backoff: number;
  readonly #timeout: number;
  readonly #maxRetryAfter: number;
  readonly #fetch: typeof fetch;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #random: () => number;

  constructor(options: RevenueClientOptions) {
    if (!options.token) throw new TypeError('RevenueClient needs a token (a secret sec_… token)');
    if (!options.endpoint) throw new TypeError('RevenueClient needs the endpoint of your Tally server');
    const base = options.endpoint.replace(/\/+$/, '');
    this.#url = base.endsWith('/api/ingest') ? base : `${base}/api/ingest`;
    this.#token = options.token;
    this.#maxRetries = options.maxRetries ?? 3;
    this.#backoff = options.retryBackoff ?? 500;
    this.#timeout = options.timeout ?? 10_000;
    this.#maxRetryAfter = options.maxRetryAfter ?? 60_000;
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#sleep = options.sleep ?? defaultSleep;
    this.#random = options.random ?? Math.random;
  }

  /**
   * Validates and sends one revenue record. Resolves once Tally has made it durable (202). Throws
   * RevenueValidationError before any request when the record breaks the contract, and TallyHttpError /
   * TallyNetworkError when sending failed for good; `error.retryable` says whether a later try may work.
   */
  async track(payload: RevenueData, options: TrackOptions = {}): Promise<TrackResult> {
    // The validator fills in defaults and upper-cases the currency in place: work on a copy.
    let data: unknown;
    try {
      data = structuredClone(payload);
    } catch {
      throw new RevenueValidationError('record must be plain JSON data (no functions or class instances)');
    }
    const result = validatePayload('revenue', data);
    if (!result.ok) throw new RevenueValidationError(result.message);
    const id = options.id ?? randomRecordId();
    if (!UUID.test(id)) throw new RevenueValidationError(`id must be a UUID (got "${id}")`);
    const body = JSON.stringify({ type: 'revenue', id, data: result.value });

    for (let attempt = 1; ; attempt++) {
      const error = await this.#attempt(body, options.signal);
      if (!error) return { id, attempts: attempt };
      if (!error.retryable || attempt > this.#maxRetries || options.signal?.aborted) throw error;
      let delay = backoffDelay(attempt, this.#backoff, this.#random());
      if (error instanceof TallyHttpError && error.status === 429 && error.retryAfterMs !== undefined) {
        if (error.retryAfterMs > this.#maxRetryAfter) throw error;
        delay = error.retryAfterMs;
      }
      try {
        await this.#sleep(delay, options.signal);
      } catch {
        throw error; // the caller gave up while waiting: the last failure says why the record is not in
      }
    }
  }

  purchase = (payload: RevenueEventInput, options?: TrackOptions) =>
    this.#typed('purchase', payload, options);
  subscription = (payload: RevenueEventInput, options?: TrackOptions) =>
    this.#typed('subscription', payload, options);
  renewal = (payload: RevenueEventInput, options?: TrackOptions) => this.#typed('renewal', payload, options);
  upgrade = (payload: RevenueEventInput, options?: TrackOptions) => this.#typed('upgrade', payload, options);
  downgrade = (payload: RevenueEventInput, options?: TrackOptions) =>
    this.#typed('downgrade', payload, options);
  /** Send `mrr_impact` negative (the MRR lost); `amount` may be zero. */
  churn = (payload: RevenueEventInput, options?: TrackOptions) => this.#typed('churn', payload, options);
  /** Send `amount` negative (the money returned). */
  refund = (payload: RevenueEventInput, options?: TrackOptions) => this.#typed('refund', payload, options);

  #typed(eventType: RevenueEventType, payload: RevenueEventInput, options?: TrackOptions) {
    return this.track({ ...payload, event_type: eventType }, options);
  }

  /** One POST; undefined when accepted, else the error it ended with. */
  async #attempt(body: string, signal: AbortSignal | undefined): Promise<TallyError | undefined> {
    if (signal?.aborted) return new TallyNetworkError('the send was aborted', { cause: signal.reason });
    // The attempt's own timeout, and the caller's signal, both abort the request (AbortSignal.any is Node 20+).
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.#timeout);
    const onAbort = () => controller.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const response = await this.#fetch(this.#url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-token': this.#token },
        body,
        signal: controller.signal,
      });
      if (response.status >= 200 && response.status < 300) {
        await response.body?.cancel();
        return undefined;
      }
      return new TallyHttpError(
        response.status,
        await serverMessage(response),
        retryAfterMs(response.headers.get('retry-after'), Date.now()),
      );
    } catch (error) {
      if (signal?.aborted) return new TallyNetworkError('the send was aborted', { cause: signal.reason });
      if (controller.signal.aborted) return new TallyTimeoutError(this.#timeout);
      return new TallyNetworkError(`could not reach Tally at ${this.#url}: ${(error as Error).message}`, {
        cause: error,
      });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }
}

/** The server's message: `message` (400, 413, 415) or `error` (401, 403, 429, 503) of its JSON body. */
async function serverMessage(response: Response): Promise<string> {
  const text = await response.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { message?: unknown; error?: unknown };
    const message = body.message ?? body.error;
    if (typeof message === 'string') return message;
  } catch {
    // not JSON: a proxy's error page, say
  }
  return text.slice(0, 200) || response.statusText || 'no message';
}
