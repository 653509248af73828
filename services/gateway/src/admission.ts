// Admission control of one gateway event loop: a bound on the requests it handles at once and on those
// waiting for the record log, beyond which a request is answered 503 with Retry-After at once, before
// Fastify sees it and before its body is read. Without it, a request beyond what the loop can serve waits
// in the loop behind all the others and every answer is late (p99 near a second at twice the load); with
// it, accepted requests keep a short wait and the overload shows in tally_gateway_shed_total.
// Two plain integers, no timer: the in-flight count is taken when Node hands over the request and given
// back when its response closes (finished or aborted); the pending count wraps the record log's append.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RecordLog } from '@tally/log';
import { errorResponse, OverloadedError } from './errors.ts';
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
  const { statusCode, headers, body } = errorResponse(new OverloadedError());
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

  /** A request listener that admits a request and hands it to `handle`, or sheds it. */
  guard(handle: RequestListener): RequestListener {
    const leave = () => {
      this.#inFlight--;
    };
    return (req, res) => {
      const reason =
        this.#inFlight >= this.#limits.maxInFlight
          ? 'in_flight'
          : this.#pendingAppends >= this.#limits.maxPendingAppends
            ? 'pending_appends'
            : null;
      if (reason !== null) {
        this.#metrics?.shed.inc({ reason });
        // Node reads and discards the unread body, so the connection stays usable for the client's retry.
        res.writeHead(SHED.statusCode, SHED.headers).end(SHED.body);
        return;
      }
      this.#inFlight++;
      this.#admitted++;
      res.once('close', leave);
      handle(req, res);
    };
  }

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
