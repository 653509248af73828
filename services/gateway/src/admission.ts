// Admission control of one gateway event loop: a bound on the requests it handles at once and on those
// waiting for the record log, beyond which a request is answered 503 with Retry-After. Without it, a
// request beyond what the loop can serve waits in the loop behind all the others and every answer is late
// (p99 near a second at twice the load); with it, accepted requests keep a short wait and the overload
// shows in tally_gateway_shed_total.
// A request counts in flight only once its body has been read (admit, from Fastify's preValidation hook),
// until its response closes: a body still arriving costs the loop no work, only its connection, which the
// connection caps and the body-read timeout bound (connection-caps.ts, body-deadlines.ts). Counted from
// its headers instead, 260 connections trickling their bodies held every slot for REQUEST_TIMEOUT_MS and
// locked honest clients out. The bounds are checked twice: when Node hands a request over (guard), so
// that a request met by a full loop is answered at once, before Fastify sees it and before its body is
// read; and when its body has been read (admit), which is where it takes its slot. Two plain integers, no
// timer; the pending count wraps the record log's append.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RecordLog } from '@tally/log';
import { errorResponse, type IngestError, ingestError } from './errors.ts';
import type { GatewayMetrics } from './metrics.ts';

export interface AdmissionLimits {
  /** Requests handled at once (GATEWAY_MAX_IN_FLIGHT). */
  maxInFlight: number;
  /** Requests waiting for the record log (GATEWAY_MAX_PENDING_APPENDS). */
  maxPendingAppends: number;
}

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/** The answer to a shed request, built once: it never varies. */
const SHED = (() => {
  const { statusCode, headers, body } = errorResponse(ingestError('overloaded'));
  const bytes = Buffer.from(body);
  return { statusCode, headers: { ...headers, 'content-length': String(bytes.length) }, body: bytes };
})();

export class Admission {
  readonly #limits: AdmissionLimits;
  readonly #metrics: GatewayMetrics | undefined;
  #inFlight = 0;
  #pendingAppends = 0;
  #admitted = 0;

  constructor(limits: AdmissionLimits, metrics?: GatewayMetrics, worker = '0') {
    this.#limits = limits;
    this.#metrics = metrics;
    if (metrics) metrics.admittedSource = { worker, count: () => this.#admitted };
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  get pendingAppends(): number {
    return this.#pendingAppends;
  }

  /** Which bound is reached, if any. */
  #fullReason(): 'in_flight' | 'pending_appends' | null {
    if (this.#inFlight >= this.#limits.maxInFlight) return 'in_flight';
    if (this.#pendingAppends >= this.#limits.maxPendingAppends) return 'pending_appends';
    return null;
  }

  /**
   * A request listener that sheds a request at once while a bound is reached, and otherwise hands it to
   * `handle`, which reads its body (it is admitted then: admit).
   */
  guard(handle: RequestListener): RequestListener {
    return (req, res) => {
      const reason = this.#fullReason();
      if (reason !== null) {
        this.#metrics?.shed.inc({ reason });
        // Node reads and discards the unread body, so the connection stays usable for the client's retry.
        res.writeHead(SHED.statusCode, SHED.headers).end(SHED.body);
        return;
      }
      handle(req, res);
    };
  }

  /**
   * Admits a request whose body has been read: it counts in flight until its response closes. Answers the
   * error to reply with when a bound is reached (then it is not counted).
   */
  admit(res: ServerResponse): IngestError | undefined {
    const reason = this.#fullReason();
    if (reason !== null) {
      this.#metrics?.shed.inc({ reason });
      return ingestError('overloaded');
    }
    this.#inFlight++;
    this.#admitted++;
    res.once('close', this.#leave);
    return undefined;
  }

  readonly #leave = () => {
    this.#inFlight--;
  };

  /** The log, its appends counted while they wait (the in-flight requests' share waiting for durability). */
  countingAppends(log: RecordLog): RecordLog {
    const done = () => {
      this.#pendingAppends--;
    };
    return {
      consumer: (options) => log.consumer(options),
      deadLetters: log.deadLetters,
      health: () => log.health(),
      close: () => log.close(),
      append: (records) => {
        this.#pendingAppends++;
        const appended = log.append(records);
        appended.then(done, done);
        return appended;
      },
    };
  }
}
