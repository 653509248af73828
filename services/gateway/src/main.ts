// The gateway process: the runner reads the configuration, starts the gateway (its GATEWAY_WORKERS event
// loops), tells it is ready, and shuts it down cleanly on SIGTERM/SIGINT.
import { setFlagsFromString } from 'node:v8';
import { runService } from '@tally/service';
import { startGatewayService } from './gateway-service.ts';

// No allocation-site pretenuring (V8 flags are per process: every gateway thread too). Under load V8 may
// decide that a request's objects, which survive a scavenge or two while their append waits for the group
// commit, come from long-lived allocation sites, and allocate them in old space from then on, where they
// wait for a mark-compact: one loop's peak RSS then rose by 40–100 MiB, depending on what happened to be
// loaded at start-up. A gateway keeps few long-lived objects; the flag is read at each collection, so
// setting it here, before any request, is in time (BENCHMARKS.md, 2026-11-25).
setFlagsFromString('--no-allocation-site-pretenuring');

await runService({
  name: 'gateway',
  async start(config, logger) {
    const gateway = await startGatewayService(config, logger);
    return {
      endpoints: { url: gateway.url, adminUrl: gateway.adminUrl },
      failed: gateway.failed,
      close: () => gateway.close(),
    };
  },
  banner(gateway, config) {
    const using = config.backends.state.kind === 'redis' ? 'Redis' : `${config.TALLY_DATA_DIR} (embedded)`;
    return (
      `Tally gateway listening on ${gateway.endpoints.url}/api/ingest (admin: ${gateway.endpoints.adminUrl}); tokens and state: ${using}\n` +
      'Create a token with:  npx tally tokens create --project my-site --kind public\n'
    );
  },
});
