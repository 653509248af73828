// The gateway process: read the configuration, start, and shut down cleanly on SIGTERM/SIGINT.
import { loadConfig } from '@tally/config';
import { startGateway } from './runtime.ts';

const config = loadConfig();
const gateway = await startGateway(config);
const using = config.REDIS_URL ? 'Redis' : `${config.TALLY_DATA_DIR} (embedded)`;
process.stdout.write(
  `Tally gateway listening on ${gateway.url}/api/ingest (admin: ${gateway.adminUrl}); tokens and state: ${using}\n` +
    'Create a token with:  npx tally tokens create --project my-site --kind public\n',
);

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    gateway.app.log.info({ signal }, 'shutting down');
    gateway.close().then(
      () => process.exit(0),
      (error: unknown) => {
        gateway.app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
}
