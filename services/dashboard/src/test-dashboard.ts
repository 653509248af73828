// For the route tests that answer through inject(): a dashboard over a fresh embedded chDB warehouse (migrated)
// and file stores in a temporary directory, with a read key of one project and two share links of it (without
// and with revenue). Not part of the service; the tests' shared setup.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@tally/config';
import {
  AlertStore,
  Invitations,
  LmdbStateStore,
  ProjectStore,
  ReportSubscriptions,
  Sessions,
  ShareLinks,
  SignInFailures,
  Users,
} from '@tally/state-store';
import { FileTokenStore, TokenVerifier } from '@tally/tokens';
import { migrate, openChdbWarehouse, type Warehouse } from '@tally/warehouse';
import type { FastifyInstance } from 'fastify';
import { buildDashboard } from './dashboard.ts';
import type { DashboardDeps } from './deps.ts';

export interface TestDashboard {
  dir: string;
  warehouse: Warehouse;
  store: LmdbStateStore;
  tokens: FileTokenStore;
  app: FastifyInstance;
  /** A read key of the project. */
  key: string;
  /** Share links of the project: without revenue, with revenue. */
  shareWithout: string;
  shareWith: string;
  close(): Promise<void>;
}

export async function startTestDashboard(
  name: string,
  project: string,
  /** Parts a test gives the dashboard besides these (the record log, the consumers, the lag gate's hold). */
  extra: Pick<DashboardDeps, 'log' | 'consumers' | 'ingestionHold'> = {},
): Promise<TestDashboard> {
  const dir = mkdtempSync(join(tmpdir(), `tally-${name}-`));
  const warehouse = await openChdbWarehouse({ dataDir: join(dir, 'warehouse'), database: 'tally' });
  await migrate(warehouse);
  const store = new LmdbStateStore(dir);
  const tokens = new FileTokenStore(dir);
  const shares = new ShareLinks(store);
  const key = (await tokens.create(project, 'read')).token;
  const shareWithout = (await shares.create(project, {})).token;
  const shareWith = (await shares.create(project, { include_revenue: true })).token;
  const readKeys = new TokenVerifier(tokens, { refreshMs: 60_000, kinds: ['read'] });
  await readKeys.refresh();
  const app = await buildDashboard({
    config: loadConfig({ TALLY_DATA_DIR: dir, DASHBOARD_PUBLIC_URL: 'http://dashboard.test' }),
    warehouse,
    users: new Users(store),
    invitations: new Invitations(store, new Users(store)),
    sessions: new Sessions(store),
    shares,
    projects: new ProjectStore(store),
    alerts: new AlertStore(store),
    reportSubscriptions: new ReportSubscriptions(store),
    readKeys,
    tokens,
    attemptLimit: { max: 5, timeWindow: 60_000 },
    signInFailures: new SignInFailures(store),
    webRoot: join(dir, 'no-web'),
    ...extra,
  });
  await app.ready();
  return {
    dir,
    warehouse,
    store,
    tokens,
    app,
    key,
    shareWithout,
    shareWith,
    close: async () => {
      await app.close();
      await store.close();
      await warehouse.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
