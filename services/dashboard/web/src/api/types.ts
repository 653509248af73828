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
  | 'browser'
  | 'os'
  | 'device'
  | 'screen_size'
  | 'hostname'
  | 'event_name'
  | 'event_property';

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
  access: { kind: AccessKind; can_edit: boolean; revenue: boolean };
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

export interface SessionInfo {
  user: { email: string };
  projects: string[];
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
