// The read API's response bodies as the web app reads them (schemas/openapi-dashboard.yaml). Written out
// here because the app's type check has the DOM library and not Node's, so it cannot load the service's
// TypeBox schemas; types.test.ts checks that each type here is the service's own (at type-check time).

export type Compare = 'previous' | 'year' | 'none';
export type Interval = 'hour' | 'day' | 'week' | 'month';

export interface PeriodSummary {
  from: string;
  to: string;
  pageviews: number;
  visitors: number;
  visits: number;
  views_per_visit: number | null;
  bounce_rate: number | null;
  visit_duration_s: number | null;
  visit_duration_median_s: number | null;
  events: number;
}

export interface Summary extends PeriodSummary {
  time_zone: string;
  current_visitors: number;
  previous: PeriodSummary | null;
}

export interface TimeseriesPoint {
  date: string;
  pageviews: number;
  visitors: number;
  visits: number;
  bounce_rate: number | null;
  visit_duration_s: number | null;
  events: number;
}

export interface Timeseries {
  interval: Interval;
  from: string;
  to: string;
  time_zone: string;
  points: TimeseriesPoint[];
  previous: { from: string; to: string; points: TimeseriesPoint[] } | null;
}

export type BreakdownDimension =
  | 'page'
  | 'entry_page'
  | 'exit_page'
  | 'channel'
  | 'source'
  | 'referrer'
  | 'utm_source'
  | 'utm_medium'
  | 'utm_campaign'
  | 'utm_term'
  | 'utm_content'
  | 'country'
  | 'region'
  | 'city'
  | 'browser'
  | 'os'
  | 'device'
  | 'screen_size'
  | 'hostname'
  | 'event_name'
  | 'event_property'
  | 'event_property_key'
  | 'not_found';

export interface BreakdownRow {
  value: string;
  visitors: number;
  visits?: number;
  pageviews?: number;
  events?: number;
  bounce_rate?: number | null;
  visit_duration_s?: number | null;
  exit_rate?: number | null;
  share: number;
}

export interface Breakdown {
  dimension: BreakdownDimension;
  property?: string;
  from: string;
  to: string;
  rows: BreakdownRow[];
  total: number;
}

export interface CurrentVisitors {
  current_visitors: number;
}

export interface RealtimeRow {
  value: string;
  visitors: number;
}

/** GET …/traffic/realtime: the last 30 minutes. */
export interface Realtime {
  visitors: number;
  pageviews_per_minute: { minute: string; pageviews: number }[];
  pages: RealtimeRow[];
  sources: RealtimeRow[];
  countries: RealtimeRow[];
}

export interface GoalTarget {
  event_name?: string;
  path?: string;
}
export interface Goal extends GoalTarget {
  id: string;
  name: string;
  created_at: string;
}
export interface Goals {
  goals: Goal[];
}
export interface FunnelStep extends GoalTarget {
  name?: string;
}
export interface Funnel {
  id: string;
  name: string;
  steps: FunnelStep[];
  created_at: string;
}
export interface Funnels {
  funnels: Funnel[];
}
export interface GoalConversions {
  from: string;
  to: string;
  visitors: number;
  rows: { goal: string; name: string; visitors: number; events: number; conversion_rate: number }[];
}
export interface FunnelResult {
  funnel: string;
  name: string;
  from: string;
  to: string;
  steps: { name: string; visitors: number; conversion_rate: number; step_conversion_rate: number }[];
}

export type AccessKind = 'user' | 'read_key' | 'share';
export interface Project {
  id: string;
  time_zone: string;
  today: string;
  access: { kind: AccessKind; can_edit: boolean; role: Role | null; revenue: boolean };
}
export interface Projects {
  projects: Project[];
}

export interface Install {
  has_data: boolean;
  gateway_url: string;
  public_tokens: { id: string; hint: string; created_at: string }[];
}
export interface CreatedToken {
  id: string;
  token: string;
}

export type Role = 'owner' | 'admin' | 'viewer';

export interface SessionInfo {
  user: { email: string };
  projects: string[];
  /** The role in each project (a user of every project, "*", is owner of each: roleIn). */
  roles: Record<string, Role>;
}

export interface Invitation {
  id: string;
  project: string;
  email: string;
  role: Role;
  invited_by: string;
  created_at: string;
  expires_at: string;
}

export interface InvitationCreated {
  invitation: Invitation;
  emailed: boolean;
  link: string | null;
}

export interface InvitationView {
  project: string;
  email: string;
  role: Role;
  invited_by: string;
  expires_at: string;
  account_exists: boolean;
}

export interface Member {
  email: string;
  role: Role;
  has_password: boolean;
}

export interface Members {
  members: Member[];
}

export interface Invitations {
  invitations: Invitation[];
}

export interface Share {
  id: string;
  name: string;
  hint: string;
  include_revenue: boolean;
  password_protected: boolean;
  embed_origins: string[];
  created_at: string;
}
export interface Shares {
  shares: Share[];
}
export interface CreatedShare {
  share: Share;
  token: string;
  url: string;
}
export interface SharedInfo {
  project: string;
  name: string;
  password_required: boolean;
  include_revenue: boolean;
}
export interface ShareGrant {
  grant: string;
  expires_at: string;
}

// ---- Revenue (dashboard part 2) ------------------------------------------------------------------------
// Money is exact decimal text ("49", "-12.5"), as the API sends it.

export interface MrrMonth {
  month: string;
  currency: string;
  mrr_start: string;
  new: string;
  expansion: string;
  reactivation: string;
  contraction: string;
  churn: string;
  mrr_end: string;
  net_new: string;
  gross_revenue_churn_rate: number | null;
  net_revenue_churn_rate: number | null;
  customer_churn_rate: number | null;
  arpa: string | null;
  /** ARPA ÷ the mean customer churn rate of the month and the two before; null when undefined. */
  ltv: string | null;
  cash_revenue: string;
  customers_start: number;
  customers_end: number;
  churned_customers: number;
}

/** One day of `GET …/revenue/mrr/daily`. */
export interface MrrDay {
  date: string;
  currency: string;
  mrr: string;
  arr: string;
  paying_customers: number;
  new: string;
  expansion: string;
  reactivation: string;
  contraction: string;
  churn: string;
  net_new: string;
  cash_revenue: string;
}

/** What a convert_to answer adds to each period's row (its figures are in `converted_to`). */
export interface ConvertedFields {
  converted_to: string;
  rates: Array<{ currency: string; period: string; rate: string }>;
  missing_currencies: string[];
}

export interface RevenueCurrencies {
  currencies: { currency: string; records: number; customers: number }[];
}

export interface ExchangeRates {
  bases: string[];
  rates: Array<{ base: string; currency: string; period: string; rate: string }>;
}

export interface AttributionFigures {
  customers: number;
  paying_customers: number;
  new: string;
  expansion: string;
  reactivation: string;
  contraction: string;
  churn: string;
  mrr_end: string;
  cash_revenue: string;
}
export interface AttributionRow extends AttributionFigures {
  key: string;
}
export interface Attribution {
  from: string;
  to: string;
  currency: string;
  by: string;
  touch: string;
  rows: AttributionRow[];
  total: AttributionFigures;
  converted_to?: string;
  rates?: ConvertedFields['rates'];
  missing_currencies?: string[];
}

export interface RevenueBreakdown {
  from: string;
  to: string;
  currency: string;
  by: string;
  rows: AttributionRow[];
  total: AttributionFigures;
  metadata_keys: string[];
  converted_to?: string;
  rates?: ConvertedFields['rates'];
  missing_currencies?: string[];
}
export interface RevenueSearch {
  records: {
    id: string;
    transaction_id: string;
    timestamp: string;
    received_at: string;
    timestamp_clamped: boolean;
    data: { [key: string]: unknown };
  }[];
}

export interface Reconciliation {
  month: string;
  currency: string;
  cash: {
    recurring: string;
    one_off: string;
    refunds: string;
    churn: string;
    unlabelled: string;
    total: string;
    records: number;
  };
  bridge: {
    mrr_start: string;
    new: string;
    expansion: string;
    reactivation: string;
    contraction: string;
    churn: string;
    computed_end: string;
    mrr_end: string;
    closes: boolean;
  };
  stored_movements: {
    new: string;
    expansion: string;
    reactivation: string;
    contraction: string;
    churn: string;
  } | null;
  warnings: {
    message: string;
    customer_id: string;
    transaction_id: string;
    record_ids: string[];
    timestamp: string;
  }[];
  errors: string[];
}

export interface DrilldownItem {
  customer_id: string;
  transaction_id: string | null;
  record_id: string | null;
  timestamp: string | null;
  event_type: string | null;
  movement: string | null;
  amount: string;
}
export interface Drilldown {
  figure: string;
  from: string;
  to: string;
  currency: string;
  group: { by: string; touch: string; key: string } | null;
  total: string;
  /** How many items make up the figure (all of them); `items` lists those from `offset` on. */
  count: number;
  offset: number;
  items: DrilldownItem[];
}

export interface CustomerSummary {
  customer_id: string;
  name: string | null;
  email: string | null;
  currency: string;
  mrr: string;
  status: 'active' | 'churned' | 'one_off';
  first_seen: string;
  first_touch: { channel: string; source: string; utm_campaign: string } | null;
  cash_revenue: string;
  records: number;
}
export interface CustomerList {
  currency: string;
  total: number;
  offset: number;
  customers: CustomerSummary[];
  converted_to?: string;
  rates?: ConvertedFields['rates'];
  missing_currencies?: string[];
}
export interface Touchpoint {
  visitor_id: string;
  start: string;
  channel: string;
  source: string;
  utm_source: string;
  utm_medium: string;
  utm_campaign: string;
  entry_path: string;
}
export interface CustomerPage {
  customer_id: string;
  summaries: CustomerSummary[];
  converted_to?: string;
  rates?: ConvertedFields['rates'];
  missing_currencies?: string[];
  first_touch: Touchpoint | null;
  last_touch: Touchpoint | null;
  identified_at: string | null;
  history: {
    timestamp: string;
    transaction_id: string;
    currency: string;
    subscription: string;
    subscription_mrr: string;
    customer_mrr: string;
    movement: string | null;
    warning: string | null;
  }[];
  records: {
    id: string;
    transaction_id: string;
    timestamp: string;
    received_at: string;
    timestamp_clamped: boolean;
    data: { [key: string]: unknown };
  }[];
  visits: {
    visitor_id: string;
    start: string;
    end: string;
    channel: string;
    source: string;
    utm_campaign: string;
    entry_path: string;
    pageviews: { timestamp: string; path: string }[];
    events: { timestamp: string; name: string }[];
  }[];
}

export interface FunnelFigures {
  visitors: number;
  identified: number;
  paying: number;
  identified_rate: number | null;
  paying_rate: number | null;
  paying_customers: number;
  mrr: string;
  cash_revenue: string;
  mrr_per_1000_visitors: string | null;
}
export interface FunnelRow extends FunnelFigures {
  key: string;
}
export interface AcquisitionFunnel {
  from: string;
  to: string;
  by: string;
  currency: string;
  rows: FunnelRow[];
  total: FunnelFigures;
  converted_to?: string;
  rates?: ConvertedFields['rates'];
  missing_currencies?: string[];
}

export interface Health {
  generated_at: string;
  stall_minutes: number;
  types: {
    type: string;
    last_received_at: string | null;
    minutes_since_last: number | null;
    status: 'ok' | 'stalled' | 'idle' | 'none';
    landed_last_hour: number;
    per_minute: number[];
  }[];
  consumer_groups:
    | {
        group: string;
        topic: string;
        lag: number;
        oldest_at: string | null;
        oldest_age_seconds: number | null;
        retention_seconds: number | null;
        near_retention: boolean;
      }[]
    | null;
  consumers:
    | {
        group: string;
        lag: number;
        status: 'ok' | 'stalled';
        stalled_since: string | null;
        stalled_seconds: number | null;
        reason: string | null;
        source: 'consumers' | 'log';
      }[]
    | null;
  /** Under npm start, while the gateway answers 503 because a consumer group is too far behind. */
  ingestion_held_back: {
    since: string;
    held_seconds: number;
    group: string;
    lag: number;
    max_lag: number;
    reopens_below: number;
  } | null;
  oldest_not_landed: { group: string; topic: string; at: string; age_seconds: number } | null;
  log_settings: {
    checked_at: string;
    mismatches: {
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
    }[];
  } | null;
  dead_letters: {
    count: number;
    by_reason: { type: string; error_code: string; count: number }[];
    recent: { id: string; type: string; error_code: string; failed_at: string }[];
  } | null;
  refused: {
    from: string;
    hours: { hour: string; status: number; count: number }[];
    by_status: { status: number; count: number }[];
    total: number;
  } | null;
  lost_records: {
    parts: { table: string; part: string; reason: string }[];
    action: string;
  } | null;
  unavailable: string[];
}

/** `GET …/revenue/cohorts`: the cohorts of a range of months, each with its months up to the range's end. */
export interface RevenueCohorts {
  currency: string;
  cohorts: Array<{
    cohort: string;
    size: number;
    months: Array<{
      offset: number;
      month: string;
      customers: number;
      mrr: string;
      logo_retention: number | null;
      net_mrr_retention: number | null;
      gross_mrr_retention: number | null;
    }>;
  }>;
  converted_to?: string;
  rates?: Array<{ currency: string; period: string; rate: string }>;
  missing_currencies?: string[];
}
export interface Annotation {
  id: string;
  /** YYYY-MM-DD or an ISO timestamp with its zone. */
  date: string;
  text: string;
  created_by: string;
  created_at: string;
}
export interface Annotations {
  annotations: Annotation[];
}
export interface Segment {
  id: string;
  name: string;
  filters: string;
  created_by: string;
  created_at: string;
}
export interface Segments {
  segments: Segment[];
}

/** The signed-in member's scheduled email reports of a project. */
export interface ReportSubscription {
  weekly: boolean;
  monthly: boolean;
}

/** What the evaluator last found for an alert rule (docs/alerts.md). */
export interface AlertState {
  status: 'ok' | 'firing' | 'cannot_evaluate' | 'pending';
  since: string | null;
  reason: string | null;
  evaluated_at: string | null;
  pending_deliveries: number;
  last_delivery_error: string | null;
}
export interface AlertRule {
  id: string;
  kind: string;
  description: string;
  threshold: number;
  record_type?: string;
  direction?: string;
  min_baseline?: number;
  currency?: string | null;
  emails: string[];
  webhook_url: string | null;
  created_by: string;
  created_at: string;
  state: AlertState;
}
export interface AlertRules {
  rules: AlertRule[];
}
export interface Members {
  members: { email: string; role: 'owner' | 'admin' | 'viewer'; has_password: boolean }[];
}
