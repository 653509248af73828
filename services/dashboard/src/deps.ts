// What the dashboard's routes work with, built by runtime.ts (or a test) and handed to buildDashboard.
import type { TallyConfig } from '@tally/config';
import type { ProjectStore, Sessions, ShareLinks, Users } from '@tally/dashboard-store';
import type { TokenStore, TokenVerifier } from '@tally/tokens';
import type { Warehouse } from '@tally/warehouse';

export interface DashboardDeps {
  config: TallyConfig;
  warehouse: Warehouse;
  users: Users;
  sessions: Sessions;
  shares: ShareLinks;
  projects: ProjectStore;
  /** Read keys (read_…) only. */
  readKeys: Pick<TokenVerifier, 'verify' | 'verifyFresh'>;
  /** The token store, to list and create a project's public tokens (install instructions). */
  tokens: Pick<TokenStore, 'list' | 'create'>;
  /** The rate limit of sign-in, password links and share unlocks, per client address. */
  attemptLimit: { max: number; timeWindow: number };
  /** Where the web app's built files are (services/dashboard/web/dist by default). */
  webRoot?: string;
}
