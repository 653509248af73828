// Prometheus metrics of the gateway, served on the admin port: requests by status and record type, and
// how long the record log takes to make an append durable.
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
}
