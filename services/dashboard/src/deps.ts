// What the dashboard's routes work with, built by runtime.ts (or a test) and handed to buildDashboard.
import type { TallyConfig } from '@tally/config';
import type { Mailer } from '@tally/mail';
import type {
  AlertStore,
  Invitations,
  ProjectStore,
  RefusalCounts,
  ReportSubscriptions,
  Sessions,
  ShareLinks,
  SignInFailures,
  Users,
} from '@tally/state-store';
import type { TokenStore, TokenVerifier } from '@tally/tokens';
import type { Warehouse } from '@tally/warehouse';

/**
 * What the health view reads of the record log: its dead letters and each consumer group's backlog (lag,
 * and when the oldest record not yet committed came). npm start hands over its log; a dashboard of its own
 * opens the configured one (health-log.ts). Structural, so that routes and tests need not the log's package.
 */
export interface HealthLog {
  deadLetters: {
    list(): Promise<
      Array<{
        id: string;
        topic: string;
        error_code: string;
        failed_at: number;
        record: { project_id: string } | null;
      }>
    >;
  };
  backlog?: () => Promise<Array<{ group: string; topic: string; lag: number; oldest_at: number | null }>>;
  /** Kafka: its topics' settings against the configuration, and their retention (@tally/log's LogSettingsCheck). */
  checkSettings?: () => Promise<{
    checked_at: number;
    mismatches: Array<{
      topic: string;
      setting:
        | 'partitions'
        | 'replication.factor'
        | 'min.insync.replicas'
        | 'retention.ms'
        | 'retention.bytes';
      expected: number;
      actual: number;
      configured_by: string;
    }>;
    retention: Array<{ topic: string; retention_ms: number | null }>;
  }>;
}

/**
 * The consumers' own account of their progress, when they run in this process (npm start: its
 * ConsumerProgress): per group, what waits, when it last committed a batch, and whether it is stalled and
 * why. Structural, like HealthLog.
 */
export interface ConsumerStates {
  states(): Array<{
    group: string;
    lag: number;
    last_progress_at: number;
    stalled_since: number | null;
    reason: string | null;
  }>;
}

/** Why ingestion is held back (LagGate in @tally/consumer; structural, like ConsumerStates). */
export interface IngestionHold {
  since: number;
  group: string;
  lag: number;
  max_lag: number;
  reopens_below: number;
}

export interface DashboardDeps {
  config: TallyConfig;
  warehouse: Warehouse;
  users: Users;
  sessions: Sessions;
  shares: ShareLinks;
  projects: ProjectStore;
  /** Pending invitations to the projects. */
  invitations: Invitations;
  /** The mailer of invitations and password links (absent or not configured: links are shown instead). */
  mailer?: Mailer;
  /**
   * Where this dashboard listens, known once it does (runtime.ts): the base of mailed links when
   * DASHBOARD_PUBLIC_URL is not set. Never the Host of a request, which a caller chooses.
   */
  listeningUrl?: () => string | undefined;
  /** The projects' alert rules, their state and incidents (docs/alerts.md). */
  alerts: AlertStore;
  /** The members' choices of scheduled email reports. */
  reportSubscriptions: ReportSubscriptions;
  /** Read keys (read_…) only. */
  readKeys: Pick<TokenVerifier, 'verify' | 'verifyFresh'>;
  /** The token store, to list and create a project's public tokens (install instructions). */
  tokens: Pick<TokenStore, 'list' | 'create'>;
  /** The rate limit of sign-in, password links and share unlocks, per client address. */
  attemptLimit: { max: number; timeWindow: number };
  /** Failed sign-ins per (client address, account) pair, and the wait they impose on that pair. */
  signInFailures: SignInFailures;
  /** Where the web app's built files are (services/dashboard/web/dist by default). */
  webRoot?: string;
  /** The record log, for the health view (absent: lag and dead letters are reported unavailable). */
  log?: HealthLog;
  /** The consumers of this process (npm start); without them, a stall is told from the log alone. */
  consumers?: ConsumerStates;
  /**
   * Why the gateway of this process holds ingestion back now (npm start's LagGate: a consumer group
   * GATEWAY_MAX_CONSUMER_LAG records behind), or null while it accepts. Absent: no such gate here.
   */
  ingestionHold?: () => IngestionHold | null;
  /** The gateway's refusal counts per project (absent: reported unavailable). */
  refusals?: Pick<RefusalCounts, 'read'>;
}

/** An absolute link to a page of the dashboard, for a mail (or to show instead of one). */
export function linkTo(deps: Pick<DashboardDeps, 'config' | 'listeningUrl'>, path: string): string {
  const base =
    deps.config.DASHBOARD_PUBLIC_URL ??
    deps.listeningUrl?.() ??
    `http://localhost:${deps.config.DASHBOARD_PORT}`;
  return `${base.replace(/\/+$/, '')}${path}`;
}
