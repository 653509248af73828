// The gateway process: the runner reads the configuration, starts the gateway (its GATEWAY_WORKERS event
// loops), tells it is ready, and shuts it down cleanly on SIGTERM/SIGINT.
import { runService } from '@tally/service';
import { startGatewayService } from './gateway-service.ts';

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
    const using = config.REDIS_URL ? 'Redis' : `${config.TALLY_DATA_DIR} (embedded)`;
    return (
      `Tally gateway listening on ${gateway.endpoints.url}/api/ingest (admin: ${gateway.endpoints.adminUrl}); tokens and state: ${using}\n` +
      'Create a token with:  npx tally tokens create --project my-site --kind public\n'
    );
  },
});
