// The dashboard as its own process (docker-compose's `dashboard` service): the runner reads the
// configuration, starts it, tells it is ready, and shuts it down on SIGTERM/SIGINT.
import { runService } from '@tally/service';
import { startDashboard } from './runtime.ts';

await runService({
  name: 'dashboard',
  async start(config, logger) {
    const dashboard = await startDashboard(config, { logger });
    return { endpoints: { url: dashboard.url, dashboardUrl: dashboard.url }, close: () => dashboard.close() };
  },
  banner({ endpoints }) {
    return (
      `Tally dashboard on ${endpoints.url} (read API: ${endpoints.url}/api/v1)\n` +
      'Add a user with:  npx tally users add you@example.com --project my-site\n'
    );
  },
});
