// Prometheus metrics of the gateway, served on the admin port: requests by status and record type, how
// long the record log takes to make an append durable, admission control (requests shed, requests
// admitted per event loop: with several workers their metrics are merged, and the worker label tells them
// apart), and the connections closed at accept by the connection caps.
import { Counter, Histogram, Registry } from 'prom-client';

export class GatewayMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'tally_ingest_requests_total',
    help: 'Requests to POST /api/ingest by response status and record type.',
    labelNames: ['status', 'type'] as const,
    registers: [this.registry],
  });
  readonly appendSeconds = new Histogram({
    name: 'tally_log_append_duration_seconds',
    help: 'Time for the record log to make an appended record durable.',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly shed = new Counter({
    name: 'tally_gateway_shed_total',
    help: 'Requests answered 503 by admission control, by the limit they met (in_flight, pending_appends; per_ip: a client behind a trusted proxy with GATEWAY_MAX_CONNECTIONS_PER_IP requests in progress; consumer_lag: under npm start, a consumer group GATEWAY_MAX_CONSUMER_LAG records behind).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly connectionsRefused = new Counter({
    name: 'tally_gateway_connections_refused_total',
    help: 'Connections to the public port closed as soon as they were accepted, by the cap they met (per_ip: GATEWAY_MAX_CONNECTIONS_PER_IP; max_connections: GATEWAY_MAX_CONNECTIONS or the file-descriptor budget).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  /** Where admitted requests are counted (admission.ts): an integer per request, read at each scrape. */
  admittedSource: { worker: string; count(): number } | null = null;
  #admittedReported = 0;
  readonly admitted: Counter<'worker'> = new Counter({
    name: 'tally_gateway_admitted_total',
    help: 'Requests admitted by a gateway event loop (worker), whatever their answer.',
    labelNames: ['worker'] as const,
    registers: [this.registry],
    collect: () => {
      const source = this.admittedSource;
      if (!source) return;
      const count = source.count();
      this.admitted.inc({ worker: source.worker }, count - this.#admittedReported);
      this.#admittedReported = count;
    },
  });
}
