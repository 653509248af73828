// The body-read timeout: a request's body must arrive at a minimum rate. Its deadline, counted from the
// moment its turn on the connection comes (its headers are in), is BODY_TIMEOUT_MS plus the time to
// receive its length (Content-Length, or BODY_LIMIT for a chunked body) at BODY_MIN_BYTES_PER_SECOND. A
// client trickling a body (`Content-Length: 60000`, then a byte a second) is cut off there with 408,
// through the same answer as Node's own request timeout, instead of holding its connection for the whole
// REQUEST_TIMEOUT_MS. Node checks its timeouts on an interval; so does this, every second, over the
// requests whose body is still arriving (most bodies arrive with their headers and are gone from the set
// within the same turn).
import type { IncomingMessage, ServerResponse } from 'node:http';

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

export interface BodyDeadlineLimits {
  /** BODY_TIMEOUT_MS: the time every body gets, whatever its length. */
  baseMs: number;
  /** BODY_MIN_BYTES_PER_SECOND. */
  minBytesPerSecond: number;
  /** BODY_LIMIT: the length a chunked body is given time for. */
  bodyLimit: number;
}

/** How often deadlines are checked (Node checks its request timeout on such an interval too). */
export const CHECK_INTERVAL_MS = 1000;

/** The milliseconds a body of `length` bytes (null: chunked) is given. */
export function bodyTimeoutMs(limits: BodyDeadlineLimits, length: number | null): number {
  const bytes = Math.min(length ?? limits.bodyLimit, limits.bodyLimit);
  return limits.baseMs + Math.ceil((bytes * 1000) / limits.minBytesPerSecond);
}

/** The body's declared length: 0 for none, null for a chunked one. */
function declaredLength(req: IncomingMessage): number | null {
  const length = req.headers['content-length'];
  if (length !== undefined) return Number(length) || 0;
  return req.headers['transfer-encoding'] === undefined ? 0 : null;
}

export class BodyDeadlines {
  readonly #limits: BodyDeadlineLimits;
  readonly #expired: (req: IncomingMessage) => void;
  /** Requests whose body is still arriving, and their deadline. */
  readonly #reading = new Map<IncomingMessage, number>();
  #timer: NodeJS.Timeout | undefined;

  /** `expired` answers a request whose body is late (408) and ends its connection. */
  constructor(limits: BodyDeadlineLimits, expired: (req: IncomingMessage) => void) {
    this.#limits = limits;
    this.#expired = expired;
  }

  /** How many bodies are arriving now. */
  get reading(): number {
    return this.#reading.size;
  }

  /** A request listener that gives each request with a body its deadline, then hands it to `handle`. */
  track(handle: RequestListener): RequestListener {
    return (req, res) => {
      const length = declaredLength(req);
      if (length !== 0) {
        this.#reading.set(req, Date.now() + bodyTimeoutMs(this.#limits, length));
        // 'close': the body was read to its end, or the request was aborted.
        req.once('close', () => this.#reading.delete(req));
        if (this.#timer === undefined) {
          this.#timer = setInterval(this.#check, CHECK_INTERVAL_MS);
          this.#timer.unref();
        }
      }
      handle(req, res);
    };
  }

  readonly #check = () => {
    const now = Date.now();
    for (const [req, deadline] of this.#reading) {
      if (req.complete || req.destroyed) this.#reading.delete(req);
      else if (deadline <= now) {
        this.#reading.delete(req);
        this.#expired(req);
      }
    }
    if (this.#reading.size === 0) this.stop();
  };

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
