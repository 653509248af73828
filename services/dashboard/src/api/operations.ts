// Every operation of the dashboard's API, declared once: method, path, who may call it, request and
// response schemas, and whether it answers CSV. The routes (routes/*.ts) attach a handler to each by its
// operationId and register it with these schemas; the OpenAPI document is generated from this table, so
// the two cannot drift.
import { type TSchema, Type } from '@sinclair/typebox';
import * as S from './schemas.ts';

/**
 * Who may call an operation:
 * - `reader`: a read key of the project, a signed-in user granted the project, or a share link of it;
 * - `revenue`: as reader, but a share link only when its creator included revenue;
 * - `editor`: a signed-in owner or admin of the project, never a viewer (settings, goals, funnels,
 *   annotations, segments, share links, tokens, alert rules; docs/design/roles.md);
 * - `operator`: a read key of the project or a signed-in user granted it, never a share link (health);
 * - `member`: a signed-in user granted the project, whatever their role (their own email reports, the
 *   project's alert rules);
 * - `user`: any signed-in user;
 * - `public`: anyone (signing in, opening a share link), rate-limited where a secret is guessed.
 */
/** The largest request body the API reads (Fastify's bodyLimit); a larger one is answered 413. */
export const BODY_LIMIT_BYTES = 64 * 1024;

export type Access = 'reader' | 'revenue' | 'editor' | 'operator' | 'member' | 'user' | 'public';

export interface Operation {
  operationId: string;
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Fastify's form (`:project`); the OpenAPI document uses `{project}`. */
  url: string;
  summary: string;
  description?: string;
  access: Access;
  tag:
    | 'Traffic'
    | 'Goals and funnels'
    | 'Annotations and segments'
    | 'Projects'
    | 'Sign-in'
    | 'Share links'
    | 'Revenue'
    | 'Health'
    | 'Alerts';
  params?: TSchema;
  querystring?: TSchema;
  body?: TSchema;
  /** Status → schema of the JSON body (null: no body). */
  responses: Record<number, TSchema | null>;
  /** Answers text/csv for `format=csv` or `Accept: text/csv`. */
  csv?: boolean;
}

const P = '/api/v1/projects/:project';

/** The table with each entry's own types (its id, its schemas), from which handlers are typed. */
const TABLE = [
  // Traffic
  {
    operationId: 'trafficSummary',
    method: 'GET',
    url: `${P}/traffic/summary`,
    tag: 'Traffic',
    summary: 'Top figures of a range, and of the comparison period',
    description:
      '`previous` holds the same figures for the comparison period (null with `compare=none`); ' +
      '`current_visitors` is not a figure of the range and is given once.',
    access: 'reader',
    params: S.ProjectParams,
    querystring: S.SummaryQuery,
    responses: { 200: S.Summary },
    csv: true,
  },
  {
    operationId: 'trafficTimeseries',
    method: 'GET',
    url: `${P}/traffic/timeseries`,
    tag: 'Traffic',
    summary: 'Figures per hour, day, week or month, with the comparison period',
    access: 'reader',
    params: S.ProjectParams,
    querystring: S.TimeseriesQuery,
    responses: { 200: S.Timeseries },
    csv: true,
  },
  {
    operationId: 'trafficBreakdown',
    method: 'GET',
    url: `${P}/traffic/breakdown/:dimension`,
    tag: 'Traffic',
    summary: 'Figures per value of a dimension, largest first',
    description:
      '`page`: pageviews in the range and their visitors. `entry_page`, `exit_page` and the other visit ' +
      'dimensions: the visits that start in the range (a visit counts where it starts), with their ' +
      'pageviews, bounce rate and mean duration; `exit_page` also gives the exit rate. `event_name`: custom ' +
      'events in the range and their visitors; `event_property` the same per value of the property named by ' +
      '`property`; `event_property_key` the keys the events’ properties use (an event counts under each of ' +
      'its keys, so the shares are of key uses); `not_found` the `404` events per their `path` property (the ' +
      'pages that told the tracker they are not found). Countries come from DB-IP Lite (IP Geolocation by DB-IP, https://db-ip.com, CC BY 4.0).',
    access: 'reader',
    params: S.BreakdownParams,
    querystring: S.BreakdownQuery,
    responses: { 200: S.Breakdown },
    csv: true,
  },
  {
    operationId: 'trafficCurrentVisitors',
    method: 'GET',
    url: `${P}/traffic/current-visitors`,
    tag: 'Traffic',
    summary: 'Visitors with a record in the last 5 minutes',
    access: 'reader',
    params: S.ProjectParams,
    querystring: Type.Object({ filters: S.RangeQuery.properties.filters }),
    responses: { 200: S.CurrentVisitors },
  },
  {
    operationId: 'trafficRealtime',
    method: 'GET',
    url: `${P}/traffic/realtime`,
    tag: 'Traffic',
    summary: 'The last 30 minutes: visitors now, pageviews per minute, top pages, sources and countries',
    description:
      '`visitors` is the current visitors (a record in the last 5 minutes). The rest covers the current ' +
      'minute and the 29 before it (UTC minutes): `pageviews_per_minute` has 30 points, oldest first, zeros ' +
      'included; `pages` counts the visitors who viewed each page in those minutes, `sources` and ' +
      '`countries` the visitors with a record in them by their visit’s source and country, top 10 of each. ' +
      'Answered with an `ETag`; a request whose `If-None-Match` names the current one is answered 304 without a body.',
    access: 'reader',
    params: S.ProjectParams,
    querystring: Type.Object({ filters: S.RangeQuery.properties.filters }),
    responses: { 200: S.Realtime, 304: null },
  },
  {
    operationId: 'trafficGoals',
    method: 'GET',
    url: `${P}/traffic/goals`,
    tag: 'Goals and funnels',
    summary: 'Conversions of every goal of the project in a range',
    access: 'reader',
    params: S.ProjectParams,
    querystring: S.RangeQuery,
    responses: { 200: S.GoalConversions },
    csv: true,
  },
  {
    operationId: 'trafficFunnel',
    method: 'GET',
    url: `${P}/traffic/funnels/:funnel`,
    tag: 'Goals and funnels',
    summary: 'Visitors through each step of a funnel in a range',
    access: 'reader',
    params: S.FunnelIdParams,
    querystring: S.RangeQuery,
    responses: { 200: S.FunnelResult, 404: S.Message },
    csv: true,
  },
  // Goals and funnels: definitions
  {
    operationId: 'listGoals',
    method: 'GET',
    url: `${P}/goals`,
    tag: 'Goals and funnels',
    summary: 'Goals of the project',
    access: 'reader',
    params: S.ProjectParams,
    responses: { 200: S.Goals },
  },
  {
    operationId: 'createGoal',
    method: 'POST',
    url: `${P}/goals`,
    tag: 'Goals and funnels',
    summary: 'Define a goal: a custom event name or a page path pattern',
    access: 'editor',
    params: S.ProjectParams,
    body: S.GoalInput,
    responses: { 201: S.Goal, 400: S.Message },
  },
  {
    operationId: 'deleteGoal',
    method: 'DELETE',
    url: `${P}/goals/:goal`,
    tag: 'Goals and funnels',
    summary: 'Delete a goal',
    access: 'editor',
    params: S.GoalIdParams,
    responses: { 204: null, 404: S.Message },
  },
  // Annotations and saved segments
  {
    operationId: 'listAnnotations',
    method: 'GET',
    url: `${P}/annotations`,
    tag: 'Annotations and segments',
    summary: 'Dated notes of the project (a deploy, a campaign), drawn on its time charts',
    access: 'reader',
    params: S.ProjectParams,
    responses: { 200: S.Annotations },
  },
  {
    operationId: 'createAnnotation',
    method: 'POST',
    url: `${P}/annotations`,
    tag: 'Annotations and segments',
    summary: 'Add a dated note',
    access: 'editor',
    params: S.ProjectParams,
    body: S.AnnotationInput,
    responses: { 201: S.Annotation, 400: S.Message },
  },
  {
    operationId: 'deleteAnnotation',
    method: 'DELETE',
    url: `${P}/annotations/:annotation`,
    tag: 'Annotations and segments',
    summary: 'Delete a note',
    access: 'editor',
    params: S.AnnotationIdParams,
    responses: { 204: null, 404: S.Message },
  },
  {
    operationId: 'listSegments',
    method: 'GET',
    url: `${P}/segments`,
    tag: 'Annotations and segments',
    summary: 'Saved segments of the project: named traffic filters, shared with its readers',
    access: 'reader',
    params: S.ProjectParams,
    responses: { 200: S.Segments },
  },
  {
    operationId: 'createSegment',
    method: 'POST',
    url: `${P}/segments`,
    tag: 'Annotations and segments',
    summary: 'Save traffic filters under a name',
    access: 'editor',
    params: S.ProjectParams,
    body: S.SegmentInput,
    responses: { 201: S.Segment, 400: S.Message },
  },
  {
    operationId: 'deleteSegment',
    method: 'DELETE',
    url: `${P}/segments/:segment`,
    tag: 'Annotations and segments',
    summary: 'Delete a saved segment',
    access: 'editor',
    params: S.SegmentIdParams,
    responses: { 204: null, 404: S.Message },
  },
  {
    operationId: 'listFunnels',
    method: 'GET',
    url: `${P}/funnels`,
    tag: 'Goals and funnels',
    summary: 'Funnels of the project',
    access: 'reader',
    params: S.ProjectParams,
    responses: { 200: S.Funnels },
  },
  {
    operationId: 'createFunnel',
    method: 'POST',
    url: `${P}/funnels`,
    tag: 'Goals and funnels',
    summary: 'Define a funnel: 2 to 8 ordered steps',
    access: 'editor',
    params: S.ProjectParams,
    body: S.FunnelInput,
    responses: { 201: S.Funnel, 400: S.Message },
  },
  {
    operationId: 'deleteFunnel',
    method: 'DELETE',
    url: `${P}/funnels/:funnel`,
    tag: 'Goals and funnels',
    summary: 'Delete a funnel',
    access: 'editor',
    params: S.FunnelIdParams,
    responses: { 204: null, 404: S.Message },
  },
  // Projects
  {
    operationId: 'listProjects',
    method: 'GET',
    url: '/api/v1/projects',
    tag: 'Projects',
    summary: 'The projects these credentials may read',
    access: 'public',
    description: 'Answers 401 without credentials; a read key or a share link sees its one project.',
    responses: { 200: S.Projects, 401: S.ErrorBody },
  },
  {
    operationId: 'getProject',
    method: 'GET',
    url: P,
    tag: 'Projects',
    summary: "A project's settings and what these credentials may do with it",
    access: 'reader',
    params: S.ProjectParams,
    responses: { 200: S.Project },
  },
  {
    operationId: 'updateProject',
    method: 'PATCH',
    url: P,
    tag: 'Projects',
    summary: "Change a project's settings (its time zone)",
    access: 'editor',
    params: S.ProjectParams,
    body: S.ProjectUpdate,
    responses: { 200: S.Project, 400: S.Message },
  },
  {
    operationId: 'getReportSubscription',
    method: 'GET',
    url: `${P}/report-subscription`,
    tag: 'Projects',
    summary: 'Which scheduled email reports of the project the signed-in member gets',
    access: 'member',
    params: S.ProjectParams,
    responses: { 200: S.ReportSubscription },
  },
  {
    operationId: 'updateReportSubscription',
    method: 'PATCH',
    url: `${P}/report-subscription`,
    tag: 'Projects',
    summary: 'Choose the weekly and/or monthly email report of the project for the signed-in member',
    access: 'member',
    params: S.ProjectParams,
    body: S.ReportSubscription,
    responses: { 200: S.ReportSubscription },
  },
  {
    operationId: 'getInstall',
    method: 'GET',
    url: `${P}/install`,
    tag: 'Projects',
    summary: 'Whether the project has data, and its public tokens (to show how to install the tracker)',
    access: 'editor',
    params: S.ProjectParams,
    responses: { 200: S.Install },
  },
  {
    operationId: 'createPublicToken',
    method: 'POST',
    url: `${P}/public-tokens`,
    tag: 'Projects',
    summary: 'Create a public (pub_…) token for the tracker',
    access: 'editor',
    params: S.ProjectParams,
    responses: { 201: S.CreatedToken },
  },
  // Sign-in
  {
    operationId: 'getSession',
    method: 'GET',
    url: '/api/v1/session',
    tag: 'Sign-in',
    summary: 'The signed-in user',
    access: 'user',
    responses: { 200: S.SessionInfo },
  },
  {
    operationId: 'signIn',
    method: 'POST',
    url: '/api/v1/session',
    tag: 'Sign-in',
    summary: 'Sign in with email and password',
    description:
      'Sets the session cookie (`tally_session`: HttpOnly, SameSite=Lax, Secure over HTTPS). Attempts are ' +
      'rate-limited per client address, and after a failure the same client address waits before trying ' +
      'the same account again (1 s, doubling with each failure in a row, at most 15 minutes); both answer ' +
      '429 with Retry-After. The account itself is never locked: the right password from another address ' +
      'signs in at once.',
    access: 'public',
    body: S.SignIn,
    responses: { 200: S.SessionInfo, 401: S.ErrorBody, 429: S.ErrorBody },
  },
  {
    operationId: 'signOut',
    method: 'DELETE',
    url: '/api/v1/session',
    tag: 'Sign-in',
    summary: 'Sign out (the session ends on the server too)',
    access: 'public',
    responses: { 204: null },
  },
  {
    operationId: 'setPassword',
    method: 'POST',
    url: '/api/v1/password',
    tag: 'Sign-in',
    summary: "Set a password with a sign-in link's one-time token, and sign in",
    description:
      'The link is printed by `tally users add` (and `tally users link`); it works once, for 7 days, and ' +
      "only the user's newest link works. Setting the password ends every session of the user; the answer " +
      'signs this browser in with a new one.',
    access: 'public',
    body: S.SetPassword,
    responses: { 200: S.SessionInfo, 400: S.Message, 401: S.ErrorBody, 429: S.ErrorBody },
  },
  {
    operationId: 'requestPasswordReset',
    method: 'POST',
    url: '/api/v1/password-reset',
    tag: 'Sign-in',
    summary: 'Mail a sign-in link that sets a new password ("forgot password")',
    description:
      'When SMTP is configured and the email has an account, mails it a sign-in link (the same one-time, 7-day ' +
      "link as `tally users link`; it revokes the user's earlier link), at most one per account every 5 minutes. " +
      'The answer is the same whether the account exists or not. The link points at DASHBOARD_PUBLIC_URL (else ' +
      'the address the dashboard listens on), never at the Host of the request.',
    access: 'public',
    body: S.PasswordResetInput,
    responses: { 202: S.PasswordResetAnswer, 429: S.ErrorBody },
  },
  {
    operationId: 'viewInvitation',
    method: 'POST',
    url: '/api/v1/invitation',
    tag: 'Sign-in',
    summary: 'What an invitation link invites to (the token in the body, never in a URL)',
    access: 'public',
    body: S.InvitationTokenInput,
    responses: { 200: S.InvitationView, 401: S.ErrorBody, 429: S.ErrorBody },
  },
  {
    operationId: 'acceptInvitation',
    method: 'POST',
    url: '/api/v1/invitation/accept',
    tag: 'Sign-in',
    summary: 'Accept an invitation once, and sign in',
    description:
      'Makes the invitee a member of the project with the invited role. For a new account the password is ' +
      "set (at least 10 characters); for an existing one it must be the account's own (401 `Invalid email or " +
      'password`, and the link still works). A used, revoked or expired link answers 401.',
    access: 'public',
    body: S.AcceptInvitation,
    responses: { 200: S.SessionInfo, 400: S.Message, 401: S.ErrorBody, 429: S.ErrorBody },
  },
  // Members and their roles
  {
    operationId: 'listInvitations',
    method: 'GET',
    url: `${P}/invitations`,
    tag: 'Projects',
    summary: "The project's pending invitations",
    access: 'editor',
    params: S.ProjectParams,
    responses: { 200: S.Invitations },
  },
  {
    operationId: 'createInvitation',
    method: 'POST',
    url: `${P}/invitations`,
    tag: 'Projects',
    summary: 'Invite an email to the project with a role; only an owner invites an owner',
    description:
      'Mails the invitee a link that works once, for 7 days (when SMTP is configured); otherwise the answer ' +
      'carries the link for the inviter to pass on. A newer invitation of the same email replaces the older.',
    access: 'editor',
    params: S.ProjectParams,
    body: S.InvitationInput,
    responses: { 201: S.InvitationCreated, 400: S.Message },
  },
  {
    operationId: 'revokeInvitation',
    method: 'DELETE',
    url: `${P}/invitations/:id`,
    tag: 'Projects',
    summary: 'Revoke a pending invitation (its link stops working)',
    access: 'editor',
    params: S.InvitationParams,
    responses: { 204: null, 404: S.Message },
  },
  {
    operationId: 'listMembers',
    method: 'GET',
    url: `${P}/members`,
    tag: 'Projects',
    summary: "The project's members and their roles (owner, admin, viewer)",
    access: 'editor',
    params: S.ProjectParams,
    responses: { 200: S.Members },
  },
  {
    operationId: 'setMemberRole',
    method: 'PATCH',
    url: `${P}/members/:email`,
    tag: 'Projects',
    summary: "Change a member's role; only an owner makes or unmakes owners, and the last owner stays",
    access: 'editor',
    params: S.MemberParams,
    body: S.MemberRoleInput,
    responses: { 200: S.Member, 400: S.Message, 404: S.Message },
  },
  {
    operationId: 'removeMember',
    method: 'DELETE',
    url: `${P}/members/:email`,
    tag: 'Projects',
    summary: 'Remove a member from the project; only an owner removes an owner, and the last owner stays',
    access: 'editor',
    params: S.MemberParams,
    responses: { 204: null, 400: S.Message, 404: S.Message },
  },
  // Share links
  {
    operationId: 'listShares',
    method: 'GET',
    url: `${P}/shares`,
    tag: 'Share links',
    summary: 'Share links of the project',
    access: 'editor',
    params: S.ProjectParams,
    responses: { 200: S.Shares },
  },
  {
    operationId: 'createShare',
    method: 'POST',
    url: `${P}/shares`,
    tag: 'Share links',
    summary: 'Create a read-only share link',
    access: 'editor',
    params: S.ProjectParams,
    body: S.ShareInput,
    responses: { 201: S.CreatedShare, 400: S.Message },
  },
  {
    operationId: 'revokeShare',
    method: 'DELETE',
    url: `${P}/shares/:share`,
    tag: 'Share links',
    summary: 'Revoke a share link (it stops working at once)',
    access: 'editor',
    params: S.ShareIdParams,
    responses: { 204: null, 404: S.Message },
  },
  {
    operationId: 'getShared',
    method: 'GET',
    url: '/api/v1/shared/:token',
    tag: 'Share links',
    summary: 'What a share link shows, before opening it',
    description:
      'Without a password, the link token itself is the credential of the shared view (`Authorization: ' +
      'Bearer shr_…`); with one, POST …/unlock first.',
    access: 'public',
    params: S.SharedTokenParams,
    responses: { 200: S.SharedInfo, 404: S.Message },
  },
  {
    operationId: 'unlockShared',
    method: 'POST',
    url: '/api/v1/shared/:token/unlock',
    tag: 'Share links',
    summary: "Open a password-protected share link: returns a grant (the shared view's credential)",
    access: 'public',
    params: S.SharedTokenParams,
    body: S.Unlock,
    responses: { 200: S.ShareGrant, 401: S.ErrorBody, 404: S.Message, 429: S.ErrorBody },
  },
  // Revenue
  {
    operationId: 'revenueMrr',
    method: 'GET',
    url: `${P}/revenue/mrr`,
    tag: 'Revenue',
    summary: 'MRR, its movements and cash revenue per month (as `tally report mrr --json`)',
    access: 'revenue',
    params: S.ProjectParams,
    querystring: S.MrrQuery,
    responses: { 200: S.MrrMonths },
    csv: true,
  },
  {
    operationId: 'revenueMrrDaily',
    method: 'GET',
    url: `${P}/revenue/mrr/daily`,
    tag: 'Revenue',
    summary:
      'MRR, ARR, paying customers, movements and cash revenue per day (as `tally report mrr --daily --json`)',
    access: 'revenue',
    params: S.ProjectParams,
    querystring: S.MrrDailyQuery,
    responses: { 200: S.MrrDays },
    csv: true,
  },
  {
    operationId: 'revenueCohorts',
    method: 'GET',
    url: `${P}/revenue/cohorts`,
    tag: 'Revenue',
    summary:
      'Cohorts by first-MRR month: customers, MRR and logo / net / gross MRR retention per month after',
    description:
      'Same answer as `tally report cohorts --json`. Money as exact decimal text, retention as fractions.',
    access: 'revenue',
    params: S.ProjectParams,
    querystring: S.CohortsQuery,
    responses: { 200: S.RevenueCohorts },
  },
  {
    operationId: 'revenueCurrencies',
    method: 'GET',
    url: `${P}/revenue/currencies`,
    tag: 'Revenue',
    summary:
      "The currencies of the project's revenue, each with its records and customers, the most used first",
    description:
      'Money is never added across currencies: the currency pickers of the app list these. Same answer as ' +
      '`tally report revenue/currencies --json`.',
    access: 'revenue',
    params: S.ProjectParams,
    responses: { 200: S.RevenueCurrencies },
  },
  {
    operationId: 'revenueExchangeRates',
    method: 'GET',
    url: `${P}/revenue/exchange-rates`,
    tag: 'Revenue',
    summary: 'The exchange rates the operator loaded (`tally revenue rates load`), for convert_to',
    access: 'revenue',
    params: S.ProjectParams,
    responses: { 200: S.ExchangeRates },
  },
  {
    operationId: 'revenueAttribution',
    method: 'GET',
    url: `${P}/revenue/attribution`,
    tag: 'Revenue',
    summary: "MRR movements, MRR at the end, paying customers and cash by the customers' first or last touch",
    description:
      "A customer's visitors are those its identify records link to it and the visitor_fingerprint of its " +
      'revenue records; its first touch is their earliest visit, its last touch the last visit that started ' +
      'before its first revenue record. Every column of `rows` adds up exactly to `total`, which equals the ' +
      'MRR report over the same months.',
    access: 'revenue',
    params: S.ProjectParams,
    querystring: S.AttributionQuery,
    responses: { 200: S.Attribution },
    csv: true,
  },
  {
    operationId: 'revenueReconciliation',
    method: 'GET',
    url: `${P}/revenue/reconciliation`,
    tag: 'Revenue',
    summary: 'One month: cash by kind of record, the MRR bridge, the data warnings with their records',
    description:
      'A bridge that does not close, or movements that differ from the mrr_movements table, are listed in `errors`.',
    access: 'revenue',
    params: S.ProjectParams,
    querystring: S.ReconciliationQuery,
    responses: { 200: S.Reconciliation },
  },
  {
    operationId: 'revenueRecords',
    method: 'GET',
    url: `${P}/revenue/records`,
    tag: 'Revenue',
    summary: 'Drill-down: the movements, records or customers that make up a figure (they sum exactly to it)',
    access: 'revenue',
    params: S.ProjectParams,
    querystring: S.RecordsQuery,
    responses: { 200: S.Drilldown },
    csv: true,
  },
  {
    operationId: 'revenueFunnel',
    method: 'GET',
    url: `${P}/revenue/funnel`,
    tag: 'Revenue',
    summary: 'Acquisition funnel per first-visit group: visitors, identified, paying, MRR and cash',
    access: 'revenue',
    params: S.ProjectParams,
    querystring: S.FunnelQuery,
    responses: { 200: S.AcquisitionFunnel },
    csv: true,
  },
  {
    operationId: 'revenueCustomers',
    method: 'GET',
    url: `${P}/revenue/customers`,
    tag: 'Revenue',
    summary: 'Customers: MRR now, status, first seen, first touch, lifetime cash (largest MRR first)',
    access: 'revenue',
    params: S.ProjectParams,
    querystring: S.CustomersQuery,
    responses: { 200: S.CustomerList },
    csv: true,
  },
  {
    operationId: 'revenueCustomer',
    method: 'GET',
    url: `${P}/revenue/customers/:customer_id`,
    tag: 'Revenue',
    summary: "A customer: MRR history per subscription, every revenue record, its visitors' visits",
    access: 'revenue',
    params: S.CustomerParams,
    querystring: S.CustomerQuery,
    responses: { 200: S.CustomerPage, 404: S.Message },
  },
  {
    operationId: 'revenueBreakdown',
    method: 'GET',
    url: `${P}/revenue/breakdown`,
    tag: 'Revenue',
    summary:
      'MRR movements, MRR at the end, paying customers and cash by plan, interval, coupon, … or metadata key',
    description:
      'Every customer is in one group (its value at the end of the range), so every column of `rows` adds ' +
      'up exactly to `total`, which equals the MRR report over the same months.',
    access: 'revenue',
    params: S.ProjectParams,
    querystring: S.RevenueBreakdownQuery,
    responses: { 200: S.RevenueBreakdown },
    csv: true,
  },
  {
    operationId: 'revenueSearch',
    method: 'GET',
    url: `${P}/revenue/search`,
    tag: 'Revenue',
    summary: 'Revenue records whose metadata has a key with a value (as `tally revenue search`)',
    access: 'revenue',
    params: S.ProjectParams,
    querystring: S.RevenueSearchQuery,
    responses: { 200: S.RevenueSearch },
  },
  {
    operationId: 'projectHealth',
    method: 'GET',
    url: `${P}/health`,
    tag: 'Health',
    summary:
      'Ingestion health: records landed per minute by type, the last of each, stalled types, consumer lag, ' +
      'oldest record not landed, dead letters, requests refused per hour by status',
    description:
      'Consumer lag and the oldest record not landed are of the whole record log (embedded or Kafka); ' +
      "refusals are the project's (a 401 has no project and is not among them); `unavailable` lists " +
      'what this deployment cannot tell.',
    access: 'operator',
    params: S.ProjectParams,
    querystring: S.HealthQuery,
    responses: { 200: S.Health },
  },
  // Alerts (docs/alerts.md)
  {
    operationId: 'listAlerts',
    method: 'GET',
    url: `${P}/alerts`,
    tag: 'Alerts',
    summary:
      "The project's alert rules with their state: ok, firing since when, or why it cannot be evaluated",
    access: 'member',
    params: S.ProjectParams,
    responses: { 200: S.AlertRules },
  },
  {
    operationId: 'createAlert',
    method: 'POST',
    url: `${P}/alerts`,
    tag: 'Alerts',
    summary: 'Add an alert rule',
    description:
      'Refused (400, saying why) for an unknown kind, a threshold out of its range, a webhook URL that is not ' +
      'http(s), an email that is not a member of the project, or a rule that tells nobody.',
    access: 'editor',
    params: S.ProjectParams,
    body: S.AlertRuleInput,
    responses: { 201: S.AlertRule, 400: S.Message },
  },
  {
    operationId: 'updateAlert',
    method: 'PATCH',
    url: `${P}/alerts/:alert`,
    tag: 'Alerts',
    summary: 'Change an alert rule (the fields given, checked as a whole)',
    access: 'editor',
    params: S.AlertIdParams,
    body: S.AlertRulePatch,
    responses: { 200: S.AlertRule, 400: S.Message, 404: S.Message },
  },
  {
    operationId: 'deleteAlert',
    method: 'DELETE',
    url: `${P}/alerts/:alert`,
    tag: 'Alerts',
    summary: 'Delete an alert rule (its open incident is dropped: no resolved message is sent)',
    access: 'editor',
    params: S.AlertIdParams,
    responses: { 204: null, 404: S.Message },
  },
] as const satisfies readonly Operation[];

export const OPERATIONS: readonly Operation[] = TABLE;

/** An operation's id, one of the table's. */
export type OperationId = (typeof TABLE)[number]['operationId'];
/** The table's entry of an operation, with its own schemas' types (routes/route.ts types handlers by them). */
export type OperationOf<Id extends OperationId> = Extract<(typeof TABLE)[number], { operationId: Id }>;

/** The operation with this id (the routes look their schemas up here). */
export function operation<Id extends OperationId>(operationId: Id): OperationOf<Id> {
  const found = TABLE.find((o): o is OperationOf<Id> => o.operationId === operationId);
  if (!found) throw new Error(`no operation ${operationId}`);
  return found;
}
