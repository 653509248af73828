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
// Where the consumers run in the same process (npm start), a third bound: while a consumer group is more
// than GATEWAY_MAX_CONSUMER_LAG records behind (LagGate in @tally/consumer, read here through a flag the
// threads share), every request is answered 503 with a longer Retry-After, before its body is read. What
// is acknowledged then lands within that bound, and the CPU a refused request would have cost goes to the
// consumers instead of to a backlog that only grows.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RecordLog } from '@tally/log';
import { errorResponse, type IngestError, ingestError } from './errors.ts';
import type { GatewayMetrics } from './metrics.ts';

export interface AdmissionLimits {
  /** Requests handled at once (GATEWAY_MAX_IN_FLIGHT). */
  maxInFlight: number;
  /** Requests waiting for the record log (GATEWAY_MAX_PENDING_APPENDS). */
  maxPendingAppends: number;
  /**
   * Set while the process's consumers are too far behind (a flag shared by the gateway's threads: element
   * 0 is non-zero while behind; landingBehindFlag).
   */
  landingBehind?: Int32Array | undefined;
}

/** A flag the gateway's threads share, set while the consumers of the process are too far behind. */
export function landingBehindFlag(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
}

type ShedReason = 'in_flight' | 'pending_appends' | 'consumer_lag';

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/** The answers to a shed request, built once: they never vary. */
const shedAnswer = (error: IngestError) => {
  const { statusCode, headers, body } = errorResponse(error);
  const bytes = Buffer.from(body);
  return { statusCode, headers: { ...headers, 'content-length': String(bytes.length) }, body: bytes };
};
const SHED = shedAnswer(ingestError('overloaded'));
const SHED_BEHIND = shedAnswer(ingestError('landing_behind'));

const errorOf = (reason: ShedReason) =>
  ingestError(reason === 'consumer_lag' ? 'landing_behind' : 'overloaded');

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
  #fullReason(): ShedReason | null {
    if (this.#inFlight >= this.#limits.maxInFlight) return 'in_flight';
    if (this.#pendingAppends >= this.#limits.maxPendingAppends) return 'pending_appends';
    const behind = this.#limits.landingBehind;
    if (behind && Atomics.load(behind, 0) !== 0) return 'consumer_lag';
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
        const answer = reason === 'consumer_lag' ? SHED_BEHIND : SHED;
        res.writeHead(answer.statusCode, answer.headers).end(answer.body);
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
      return errorOf(reason);
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
