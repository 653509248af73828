// The all-in-one process of `npm start`: the runner reads the configuration, starts gateway, consumers,
// warehouse and admin server, tells it is ready, shuts down cleanly on SIGTERM/SIGINT, and stops (exit 1)
// if the gateway thread or the record log fails.
import { runService } from '@tally/service';
import { startTally } from './runtime.ts';

await runService({
  name: 'tally',
  async start(config, logger) {
    const tally = await startTally(config, logger);
    return {
      endpoints: {
        url: tally.gateway.url,
        adminUrl: tally.adminUrl,
        warehouseUrl: tally.warehouseUrl,
        dashboardUrl: tally.dashboardUrl,
      },
      failed: tally.failed,
      close: () => tally.close(),
    };
  },
  banner({ endpoints }, config) {
    const using = config.backends.state.kind === 'redis' ? 'Redis' : `${config.TALLY_DATA_DIR} (embedded)`;
    const backend = config.backends.warehouse;
    const warehouse =
      backend.kind === 'clickhouse'
        ? `ClickHouse (${new URL(backend.url).host}, database ${config.CLICKHOUSE_DATABASE})`
        : `chDB in ${config.TALLY_DATA_DIR}/warehouse, SQL over HTTP at ${endpoints.warehouseUrl} (npx tally warehouse credentials)`;
    return (
      `Tally gateway listening on ${endpoints.url}/api/ingest (admin: ${endpoints.adminUrl}); tokens and state: ${using}\n` +
      `Warehouse: ${warehouse}\n` +
      `Dashboard: ${endpoints.dashboardUrl} (add a user: npx tally users add you@example.com --project my-site)\n` +
      'Create a token with:  npx tally tokens create --project my-site --kind public\n' +
      'Query with:           npx tally sql "SELECT count() FROM pageviews"\n'
    );
  },
});
