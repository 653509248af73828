// The read API's request and response shapes as JSON Schema (TypeBox), the one source of truth: Fastify
// validates requests and serialises responses with them, and the OpenAPI document
// (schemas/openapi-dashboard.yaml) is generated from them (operations.ts, openapi.ts).
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { ATTRIBUTION_DIMENSIONS, DRILLDOWN_FIGURES, TOUCHES } from '@tally/reports/revenue';
import { BREAKDOWN_DIMENSIONS } from '@tally/reports/traffic';
import { ANNOTATION_DATE_PATTERN, EMBED_ORIGIN_PATTERN } from '@tally/state-store';

const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const rate = (description: string) =>
  nullable(
    Type.Number({ minimum: 0, description: `${description} A fraction (0.5 is 50%); null without visits.` }),
  );

export const PROJECT_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$';
export const DAY_PATTERN = '^\\d{4}-\\d{2}-\\d{2}$';
export const MONTH_PATTERN = '^[12]\\d{3}-(0[1-9]|1[0-2])$';

export const ProjectParams = Type.Object({
  project: Type.String({
    pattern: PROJECT_ID_PATTERN,
    description: 'Project id (as in `tally tokens create --project`).',
  }),
});

// ---- Errors -------------------------------------------------------------------------------------------

export const Message = Type.Object(
  { message: Type.String() },
  {
    $id: 'Message',
    description: 'An input problem (400, 404, 405): what is wrong, never quoting the request.',
  },
);
export const ErrorBody = Type.Object(
  { error: Type.String() },
  {
    $id: 'Error',
    description:
      'An authentication, authorisation or availability problem: 401 `Unauthorized` (no valid credentials), ' +
      '403 (`Forbidden`, `Cross-site request refused`, `Revenue is not shared`), 429 `Too many attempts`, 503.',
  },
);

// ---- Traffic queries ----------------------------------------------------------------------------------

export const COMPARE = ['previous', 'year', 'none'] as const;
export const INTERVALS = ['hour', 'day', 'week', 'month'] as const;

const rangeQuery = {
  from: Type.String({
    pattern: DAY_PATTERN,
    description: "First day of the range (YYYY-MM-DD), in the project's time zone.",
  }),
  to: Type.String({
    pattern: DAY_PATTERN,
    description:
      "Last day of the range (YYYY-MM-DD, included), in the project's time zone. At most 731 days.",
  }),
  filters: Type.Optional(
    Type.String({
      maxLength: 4096,
      description:
        'Filters applied to every figure, separated by `;`, each `dimension` `operator` `values`. Operators: ' +
        '`==` (is), `!=` (is not), `~=` (contains), `!~` (does not contain); several values separated by `|` ' +
        'match any of them; `\\` escapes `;`, `|` and `\\` in a value. In page dimensions (`page`, ' +
        '`entry_page`, `exit_page`) `*` matches any characters (`page==/blog/*`). Dimensions: `page`, ' +
        '`entry_page`, `exit_page`, `channel`, `source`, `referrer`, `utm_source`, `utm_medium`, ' +
        '`utm_campaign`, `utm_term`, `utm_content`, `country`, `browser`, `os`, `device`, `screen_size`, ' +
        '`hostname`, `event_name`, and `prop:<key>` (a custom event property). A filter keeps the visits that ' +
        "match it (a visit's own attributes are those of its entry pageview; `page`, `event_name` and " +
        '`prop:` match a visit that has such a pageview or event) and every figure is computed over them. ' +
        'Example: `channel==Organic Search|Email;page==/blog/*;country!=US`.',
    }),
  ),
  format: Type.Optional(
    Type.Union([Type.Literal('json'), Type.Literal('csv')], {
      description: 'csv: the same figures as CSV (also chosen by `Accept: text/csv`).',
    }),
  ),
};
const compareQuery = {
  compare: Type.Optional(
    Type.Union(
      COMPARE.map((c) => Type.Literal(c)),
      {
        description:
          'The comparison period: `previous` (default: as many days just before), `year` (the same days a ' +
          'year earlier) or `none`.',
      },
    ),
  ),
};

export const SummaryQuery = Type.Object({ ...rangeQuery, ...compareQuery });
export const TimeseriesQuery = Type.Object({
  ...rangeQuery,
  ...compareQuery,
  interval: Type.Optional(
    Type.Union(
      INTERVALS.map((i) => Type.Literal(i)),
      { description: 'Bucket of each point (default day); hour for ranges of at most 31 days.' },
    ),
  ),
});
export const BreakdownQuery = Type.Object({
  ...rangeQuery,
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 10_000, description: 'Most rows returned (default 10).' }),
  ),
  sort: Type.Optional(
    Type.Union(
      [
        'visitors',
        'visits',
        'pageviews',
        'events',
        'bounce_rate',
        'visit_duration_s',
        'exit_rate',
        'value',
      ].map((s) => Type.Literal(s)),
      { description: "Column to order by (default: the dimension's main figure), then by value." },
    ),
  ),
  order: Type.Optional(
    Type.Union([Type.Literal('desc'), Type.Literal('asc')], { description: 'Default desc.' }),
  ),
  property: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 256,
      description: 'For `event_property`: the key of the custom events’ properties to break down by.',
    }),
  ),
});
export const BreakdownParams = Type.Object({
  ...ProjectParams.properties,
  dimension: Type.Union(
    BREAKDOWN_DIMENSIONS.map((d) => Type.Literal(d)),
    { description: 'What to break the figures down by.' },
  ),
});
export const RangeQuery = Type.Object(rangeQuery);

const periodFigures = {
  from: Type.String({ description: 'First day (YYYY-MM-DD).' }),
  to: Type.String({ description: 'Last day, included.' }),
  pageviews: Type.Integer({ description: 'Pageviews (bots left out).' }),
  visitors: Type.Integer({ description: 'Unique visitors with a pageview or custom event in the range.' }),
  visits: Type.Integer({ description: 'Visits that start in the range.' }),
  views_per_visit: nullable(Type.Number({ description: 'Pageviews / visits.' })),
  bounce_rate: rate('Visits with exactly one pageview and no custom event / visits.'),
  visit_duration_s: nullable(
    Type.Number({ description: 'Mean visit duration in seconds (0 for a bounce).' }),
  ),
  visit_duration_median_s: nullable(Type.Number({ description: 'Median visit duration in seconds.' })),
  events: Type.Integer({ description: 'Custom events in the range.' }),
};
export const PeriodSummary = Type.Object(periodFigures, { $id: 'PeriodSummary' });
export const Summary = Type.Object(
  {
    ...periodFigures,
    time_zone: Type.String({ description: "The project's time zone, in which the days are." }),
    current_visitors: Type.Integer({ description: 'Visitors with a record in the last 5 minutes.' }),
    previous: nullable(Type.Ref(PeriodSummary)),
  },
  { $id: 'Summary' },
);

export const TimeseriesPoint = Type.Object(
  {
    date: Type.String({
      description:
        "Start of the bucket in the project's time zone: `YYYY-MM-DD` (day, week from Monday, month) or `YYYY-MM-DD HH:00` (hour).",
    }),
    pageviews: Type.Integer(),
    visitors: Type.Integer({ description: 'Unique visitors with a record in the bucket.' }),
    visits: Type.Integer({ description: 'Visits that start in the bucket.' }),
    bounce_rate: rate('Of the visits that start in the bucket.'),
    visit_duration_s: nullable(Type.Number()),
    events: Type.Integer(),
  },
  { $id: 'TimeseriesPoint' },
);
export const Timeseries = Type.Object(
  {
    interval: Type.Union(INTERVALS.map((i) => Type.Literal(i))),
    from: Type.String(),
    to: Type.String(),
    time_zone: Type.String(),
    points: Type.Array(Type.Ref(TimeseriesPoint)),
    previous: nullable(
      Type.Object({
        from: Type.String(),
        to: Type.String(),
        points: Type.Array(Type.Ref(TimeseriesPoint), {
          description: 'As many points as `points`, the n-th beside the n-th.',
        }),
      }),
    ),
  },
  { $id: 'Timeseries' },
);

export const BreakdownRow = Type.Object(
  {
    value: Type.String({
      description:
        "The dimension's value; '' when unknown (a visit without a country, a browser not recognised). " +
        'Sources without referrer and UTM are `Direct / None`.',
    }),
    visitors: Type.Integer(),
    visits: Type.Optional(
      Type.Integer({ description: 'Visits (entry and exit pages: entering or leaving on it).' }),
    ),
    pageviews: Type.Optional(Type.Integer()),
    events: Type.Optional(Type.Integer()),
    bounce_rate: Type.Optional(rate('Of these visits.')),
    visit_duration_s: Type.Optional(nullable(Type.Number())),
    exit_rate: Type.Optional(
      nullable(Type.Number({ description: 'Exit pages: visits leaving on the page / its pageviews.' })),
    ),
    share: Type.Number({
      description:
        "This row's part of the main figure's total (pageviews for pages, visits for visit dimensions, events " +
        'for events), as a fraction.',
    }),
  },
  { $id: 'BreakdownRow' },
);
export const Breakdown = Type.Object(
  {
    dimension: Type.Union(BREAKDOWN_DIMENSIONS.map((d) => Type.Literal(d))),
    property: Type.Optional(Type.String()),
    from: Type.String(),
    to: Type.String(),
    rows: Type.Array(Type.Ref(BreakdownRow)),
    total: Type.Integer({ description: "The main figure over every value (the shares' denominator)." }),
  },
  { $id: 'Breakdown' },
);

export const CurrentVisitors = Type.Object(
  { current_visitors: Type.Integer({ description: 'Visitors with a record in the last 5 minutes.' }) },
  { $id: 'CurrentVisitors' },
);

export const RealtimeRow = Type.Object(
  { value: Type.String(), visitors: Type.Integer() },
  { $id: 'RealtimeRow' },
);
export const Realtime = Type.Object(
  {
    visitors: Type.Integer({
      description: 'Visitors with a record in the last 5 minutes (the current visitors).',
    }),
    pageviews_per_minute: Type.Array(
      Type.Object({
        minute: Type.String({ description: 'The minute’s start, ISO 8601 in UTC.' }),
        pageviews: Type.Integer(),
      }),
      { description: 'The current minute and the 29 before it, oldest first.' },
    ),
    pages: Type.Array(Type.Ref(RealtimeRow), {
      description: 'Visitors who viewed each page in the 30 minutes.',
    }),
    sources: Type.Array(Type.Ref(RealtimeRow), {
      description: 'Visitors with a record in the 30 minutes, by their visit’s source.',
    }),
    countries: Type.Array(Type.Ref(RealtimeRow), {
      description: 'Visitors with a record in the 30 minutes, by their visit’s country.',
    }),
  },
  { $id: 'Realtime' },
);

// ---- Goals and funnels --------------------------------------------------------------------------------

const goalTarget = {
  event_name: Type.Optional(
    Type.String({ minLength: 1, maxLength: 256, description: 'A custom event name.' }),
  ),
  path: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 4096,
      description: 'A page path; `*` matches any characters (`/blog/*`).',
    }),
  ),
};
export const GoalInput = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 200 }), ...goalTarget },
  { additionalProperties: false, description: 'Exactly one of `event_name` and `path`.' },
);
export const Goal = Type.Object(
  { id: Type.String(), name: Type.String(), ...goalTarget, created_at: Type.String() },
  { $id: 'Goal' },
);
export const Goals = Type.Object({ goals: Type.Array(Type.Ref(Goal)) }, { $id: 'Goals' });
export const FunnelStep = Type.Object(
  { name: Type.Optional(Type.String({ maxLength: 200 })), ...goalTarget },
  { additionalProperties: false, description: 'Exactly one of `event_name` and `path`.' },
);
export const FunnelInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    steps: Type.Array(FunnelStep, { minItems: 2, maxItems: 8 }),
  },
  { additionalProperties: false },
);
export const Funnel = Type.Object(
  { id: Type.String(), name: Type.String(), steps: Type.Array(FunnelStep), created_at: Type.String() },
  { $id: 'Funnel' },
);
export const Funnels = Type.Object({ funnels: Type.Array(Type.Ref(Funnel)) }, { $id: 'Funnels' });
export const GoalIdParams = Type.Object({
  ...ProjectParams.properties,
  goal: Type.String({ maxLength: 64 }),
});
export const FunnelIdParams = Type.Object({
  ...ProjectParams.properties,
  funnel: Type.String({ maxLength: 64 }),
});

// ---- Members and their roles (docs/design/roles.md) ----------------------------------------------

export const MemberParams = Type.Object({
  ...ProjectParams.properties,
  email: Type.String({ maxLength: 320 }),
});
const RoleName = Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('viewer')]);
export const Member = Type.Object(
  {
    email: Type.String(),
    role: RoleName,
    has_password: Type.Boolean({ description: 'False until the member has set a password.' }),
  },
  { $id: 'Member' },
);
export const Members = Type.Object(
  { members: Type.Array(Type.Ref(Member), { description: 'By email.' }) },
  { $id: 'Members' },
);
export const MemberRoleInput = Type.Object({ role: RoleName }, { additionalProperties: false });

export const Invitation = Type.Object(
  {
    id: Type.String(),
    project: Type.String(),
    email: Type.String(),
    role: RoleName,
    invited_by: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    expires_at: Type.String({ format: 'date-time', description: '7 days after it was made.' }),
  },
  { $id: 'Invitation' },
);
export const Invitations = Type.Object(
  { invitations: Type.Array(Type.Ref(Invitation), { description: 'Pending ones, oldest first.' }) },
  { $id: 'Invitations' },
);
export const InvitationInput = Type.Object(
  { email: Type.String({ minLength: 3, maxLength: 254 }), role: RoleName },
  { additionalProperties: false },
);
export const InvitationCreated = Type.Object(
  {
    invitation: Type.Ref(Invitation),
    emailed: Type.Boolean({ description: 'Whether the link was mailed to the invitee.' }),
    link: Type.Union([Type.String(), Type.Null()], {
      description:
        'The invitation link, for the inviter to pass on, when it was not mailed (no SMTP server configured, or ' +
        'the server refused it); null when mailed. It works once, for 7 days.',
    }),
  },
  { $id: 'InvitationCreated' },
);
export const InvitationParams = Type.Object({
  project: ProjectParams.properties.project,
  id: Type.String({ minLength: 1, maxLength: 64 }),
});
const InvitationToken = Type.String({
  minLength: 1,
  maxLength: 256,
  description: "The invitation link's one-time token.",
});
export const InvitationTokenInput = Type.Object({ token: InvitationToken }, { additionalProperties: false });
export const InvitationView = Type.Object(
  {
    project: Type.String(),
    email: Type.String(),
    role: RoleName,
    invited_by: Type.String(),
    expires_at: Type.String({ format: 'date-time' }),
    account_exists: Type.Boolean({
      description: 'Whether the email has an account: then its password accepts, else the password is set.',
    }),
  },
  { $id: 'InvitationView' },
);
export const AcceptInvitation = Type.Object(
  {
    token: InvitationToken,
    password: Type.String({
      minLength: 1,
      maxLength: 1024,
      description: "A new account's password (at least 10 characters), or an existing account's own.",
    }),
  },
  { additionalProperties: false },
);

// ---- Annotations and saved segments ---------------------------------------------------------------

export const AnnotationInput = Type.Object(
  {
    date: Type.String({
      pattern: ANNOTATION_DATE_PATTERN,
      description:
        "A day (YYYY-MM-DD, in the project's time zone) or an ISO 8601 timestamp with its zone (2026-03-01T10:00:00Z).",
    }),
    text: Type.String({ minLength: 1, maxLength: 500 }),
  },
  { additionalProperties: false },
);
export const Annotation = Type.Object(
  {
    id: Type.String(),
    date: Type.String(),
    text: Type.String(),
    created_by: Type.String({ description: "The user's email, or `cli` (`tally annotations add`)." }),
    created_at: Type.String(),
  },
  { $id: 'Annotation' },
);
export const Annotations = Type.Object(
  { annotations: Type.Array(Type.Ref(Annotation), { description: 'Oldest date first.' }) },
  { $id: 'Annotations' },
);
export const AnnotationIdParams = Type.Object({
  ...ProjectParams.properties,
  annotation: Type.String({ maxLength: 64 }),
});
export const SegmentInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    filters: Type.String({
      minLength: 1,
      maxLength: 4096,
      description: 'Traffic filters, in the syntax of the `filters` parameter of the traffic operations.',
    }),
  },
  { additionalProperties: false },
);
export const Segment = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    filters: Type.String(),
    created_by: Type.String(),
    created_at: Type.String(),
  },
  { $id: 'Segment' },
);
export const Segments = Type.Object(
  { segments: Type.Array(Type.Ref(Segment), { description: 'By name.' }) },
  { $id: 'Segments' },
);
export const SegmentIdParams = Type.Object({
  ...ProjectParams.properties,
  segment: Type.String({ maxLength: 64 }),
});

export const GoalConversions = Type.Object(
  {
    from: Type.String(),
    to: Type.String(),
    visitors: Type.Integer({ description: 'Unique visitors of the range (the denominator).' }),
    rows: Type.Array(
      Type.Object({
        goal: Type.String({ description: 'Goal id.' }),
        name: Type.String(),
        visitors: Type.Integer({ description: 'Visitors who reached the goal in the range.' }),
        events: Type.Integer({ description: 'Times it was reached (matching pageviews or events).' }),
        conversion_rate: Type.Number({ description: 'visitors / unique visitors of the range.' }),
      }),
    ),
  },
  { $id: 'GoalConversions' },
);
export const FunnelResult = Type.Object(
  {
    funnel: Type.String(),
    name: Type.String(),
    from: Type.String(),
    to: Type.String(),
    steps: Type.Array(
      Type.Object({
        name: Type.String(),
        visitors: Type.Integer({
          description: 'Visitors who reached this step and every one before it, in order, within the range.',
        }),
        conversion_rate: Type.Number({ description: 'visitors / visitors of the first step.' }),
        step_conversion_rate: Type.Number({ description: 'visitors / visitors of the step before.' }),
      }),
    ),
  },
  { $id: 'FunnelResult' },
);

// ---- Projects, sessions, share links ------------------------------------------------------------------

export const AccessKind = Type.Union([Type.Literal('user'), Type.Literal('read_key'), Type.Literal('share')]);
export const Project = Type.Object(
  {
    id: Type.String(),
    time_zone: Type.String({ description: 'IANA time zone in which days are counted (default UTC).' }),
    today: Type.String({ description: "Today's date in that time zone (YYYY-MM-DD)." }),
    access: Type.Object({
      kind: AccessKind,
      can_edit: Type.Boolean({
        description:
          "May change the project's settings, goals, funnels, notes, segments, share links and members: its signed-in owners and admins.",
      }),
      role: Type.Union([RoleName, Type.Null()], {
        description: "A signed-in member's role in the project; null for a read key or a share link.",
      }),
      revenue: Type.Boolean({
        description: 'May read revenue figures (false on a share link that hides them).',
      }),
    }),
  },
  { $id: 'Project' },
);
export const Projects = Type.Object({ projects: Type.Array(Type.Ref(Project)) }, { $id: 'Projects' });
export const ProjectUpdate = Type.Object(
  {
    time_zone: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'An IANA time zone (Europe/Berlin).',
    }),
  },
  { additionalProperties: false },
);
export const Install = Type.Object(
  {
    has_data: Type.Boolean({ description: 'Whether the project has received any pageview or event.' }),
    gateway_url: Type.String({
      description:
        'Where browsers reach the gateway, which serves `/tally.js` and `/api/ingest`: `GATEWAY_PUBLIC_URL`, else this host on the gateway port.',
    }),
    public_tokens: Type.Array(
      Type.Object({ id: Type.String(), hint: Type.String(), created_at: Type.String() }),
      { description: 'Active public tokens (only their first characters: tokens are stored hashed).' },
    ),
  },
  { $id: 'Install' },
);
export const CreatedToken = Type.Object(
  { id: Type.String(), token: Type.String({ description: 'The new public token, shown only now.' }) },
  { $id: 'CreatedToken' },
);

export const SignIn = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);
export const SetPassword = Type.Object(
  {
    token: Type.String({
      minLength: 1,
      maxLength: 256,
      description: 'The one-time token of the sign-in link.',
    }),
    password: Type.String({ minLength: 10, maxLength: 1024, description: 'At least 10 characters.' }),
  },
  { additionalProperties: false },
);
export const SessionInfo = Type.Object(
  {
    user: Type.Object({ email: Type.String() }),
    projects: Type.Array(Type.String(), { description: 'Projects this user may read ("*": every project).' }),
    roles: Type.Record(Type.String(), RoleName, {
      description:
        'The user\'s role in each of their projects (owner, admin, viewer); a user of every project ("*") is owner of each.',
    }),
  },
  { $id: 'SessionInfo' },
);

export const PasswordResetInput = Type.Object(
  { email: Type.String({ minLength: 3, maxLength: 254 }) },
  { additionalProperties: false },
);
export const PasswordResetAnswer = Type.Object(
  {
    emailed: Type.Boolean({
      description:
        'Whether this server sends email (SMTP is configured). True says a link was mailed if the address has an ' +
        'account, never whether it has one; false: nothing can be mailed, an admin runs `tally users link EMAIL`.',
    }),
  },
  { $id: 'PasswordResetAnswer' },
);

export const ShareInput = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 200 })),
    password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
    include_revenue: Type.Optional(Type.Boolean({ description: 'Show revenue figures (default false).' })),
    embed_origins: Type.Optional(
      Type.Array(Type.String({ pattern: EMBED_ORIGIN_PATTERN, maxLength: 253 }), {
        maxItems: 20,
        description:
          'Origins (`https://blog.example`) allowed to show the shared view in an iframe (its CSP ' +
          '`frame-ancestors`); none by default. Each exactly an origin as browsers write it: `http` or ' +
          '`https`, the host in lower case, the port only when not the default, no path (else 400).',
      }),
    ),
  },
  { additionalProperties: false },
);
export const Share = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    hint: Type.String({ description: "The link token's first characters." }),
    include_revenue: Type.Boolean(),
    password_protected: Type.Boolean(),
    embed_origins: Type.Array(Type.String()),
    created_at: Type.String(),
  },
  { $id: 'Share' },
);
export const Shares = Type.Object({ shares: Type.Array(Type.Ref(Share)) }, { $id: 'Shares' });
export const CreatedShare = Type.Object(
  {
    share: Type.Ref(Share),
    token: Type.String({ description: 'The link token (shr_…), shown only now.' }),
    url: Type.String({ description: 'The shared view: `<dashboard>/share/<token>`.' }),
  },
  { $id: 'CreatedShare' },
);
export const ShareIdParams = Type.Object({
  ...ProjectParams.properties,
  share: Type.String({ maxLength: 64 }),
});
export const SharedTokenParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 256 }) });
export const SharedInfo = Type.Object(
  {
    project: Type.String(),
    name: Type.String(),
    password_required: Type.Boolean(),
    include_revenue: Type.Boolean(),
  },
  { $id: 'SharedInfo' },
);
export const Unlock = Type.Object(
  { password: Type.String({ minLength: 1, maxLength: 1024 }) },
  { additionalProperties: false },
);
export const ShareGrant = Type.Object(
  {
    grant: Type.String({ description: 'A bearer credential (shg_…) for the shared view, until expires_at.' }),
    expires_at: Type.String(),
  },
  { $id: 'ShareGrant' },
);

// ---- Revenue (a share link may hide it) ---------------------------------------------------------------

const revenueFilters = Type.Optional(
  Type.String({
    maxLength: 4096,
    description:
      "Only the customers whose attributes match, in the traffic filters' syntax (`;` between filters, " +
      '`==`, `!=`, `~=`, `!~`, `|` between values, `\\` escapes). Dimensions: `plan`, `interval`, `coupon`, ' +
      "`source`, `campaign` (metadata keys), `payment_processor`, `metadata.<key>`. A customer's attribute is " +
      'its value on its latest revenue record up to the end of the range that has one, `(none)` when none ' +
      'has. Example: `plan==pro|business;metadata.team!=internal`.',
  }),
);

export const MrrQuery = Type.Object({
  from: Type.String({ pattern: MONTH_PATTERN, description: 'First month (YYYY-MM, UTC).' }),
  to: Type.String({ pattern: MONTH_PATTERN, description: 'Last month, included.' }),
  currency: Type.Optional(Type.String({ pattern: '^[A-Za-z]{3}$' })),
  filters: revenueFilters,
  convert_to: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z]{3}$',
      description:
        "Convert every currency (or `currency`) with the operator's loaded rates and add them up: one row per " +
        'period marked `converted_to`, with the rates used and the currencies left out for want of a rate. ' +
        '400 when no rates to this currency are loaded.',
    }),
  ),
  format: rangeQuery.format,
});
export const MrrMonths = Type.Array(Type.Record(Type.String(), Type.Unknown()), {
  $id: 'MrrMonths',
  description:
    'One object per month and currency, the same as `tally report mrr --json` (money as exact decimal text).',
});

export const MrrDailyQuery = Type.Object({
  from: Type.String({ pattern: DAY_PATTERN, description: 'First day (YYYY-MM-DD, UTC).' }),
  to: Type.String({ pattern: DAY_PATTERN, description: 'Last day, included; at most 366 days in all.' }),
  currency: MrrQuery.properties.currency,
  convert_to: MrrQuery.properties.convert_to,
  format: rangeQuery.format,
});
export const MrrDays = Type.Array(Type.Record(Type.String(), Type.Unknown()), {
  $id: 'MrrDays',
  description:
    'One object per day (UTC) and currency: MRR and ARR at the end of the day, paying customers, the ' +
    "day's movements and cash revenue (as `tally report mrr --daily --json`). The last day of a month has " +
    "the monthly report's mrr_end; a month's days add up to its movements.",
});
export const RevenueCurrencies = Type.Object(
  {
    currencies: Type.Array(
      Type.Object({
        currency: Type.String({ description: 'Three-letter code as the records carry it.' }),
        records: Type.Integer({ description: 'Revenue records in it.' }),
        customers: Type.Integer({ description: 'Customers with a record in it.' }),
      }),
      { description: 'The most used first (by records, then by code).' },
    ),
  },
  { $id: 'RevenueCurrencies' },
);

export const CohortsQuery = Type.Object({
  from: Type.String({ pattern: MONTH_PATTERN, description: 'First cohort month (YYYY-MM, UTC).' }),
  to: Type.String({
    pattern: MONTH_PATTERN,
    description: 'Last cohort month, included; also the last month of every cohort (a triangle).',
  }),
  currency: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z]{3}$',
      description: 'Default USD; with `convert_to`, every currency when not given.',
    }),
  ),
  filters: revenueFilters,
  convert_to: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z]{3}$',
      description:
        "Convert each customer's MRR with each month's loaded rate and add its currencies up (its cohort is " +
        'its earliest in any currency); the answer names the rates used and the currencies left out. 400 ' +
        'when no rates to this currency are loaded.',
    }),
  ),
});
const retention = (what: string) =>
  Type.Union([Type.Number(), Type.Null()], { description: `${what}; null when the denominator is 0.` });
export const RevenueCohorts = Type.Object(
  {
    currency: Type.String(),
    cohorts: Type.Array(
      Type.Object({
        cohort: Type.String({ description: 'YYYY-MM: the month its customers first had MRR above 0.' }),
        size: Type.Integer({ description: 'Customers in the cohort.' }),
        months: Type.Array(
          Type.Object({
            offset: Type.Integer({ description: 'Months after the cohort month (0 is the cohort month).' }),
            month: Type.String({ description: 'YYYY-MM: the cohort month + offset.' }),
            customers: Type.Integer({ description: 'Customers of the cohort paying when the month ends.' }),
            mrr: Type.String({ description: "The cohort's MRR when the month ends (exact decimal text)." }),
            logo_retention: retention('customers ÷ size'),
            net_mrr_retention: retention("mrr ÷ the cohort's MRR at offset 0"),
            gross_mrr_retention: retention(
              'The same, each customer counted at most at its own MRR at offset 0 (never above 1)',
            ),
          }),
        ),
      }),
      { description: 'The cohorts with customers, oldest first; each with its months up to `to`.' },
    ),
    converted_to: Type.Optional(Type.String()),
    rates: Type.Optional(
      Type.Array(Type.Object({ currency: Type.String(), period: Type.String(), rate: Type.String() })),
    ),
    missing_currencies: Type.Optional(Type.Array(Type.String())),
  },
  { $id: 'RevenueCohorts' },
);

export const ExchangeRates = Type.Object(
  {
    bases: Type.Array(Type.String(), {
      description: 'Currencies that rates convert to (convert_to values).',
    }),
    rates: Type.Array(
      Type.Object({
        base: Type.String(),
        currency: Type.String(),
        period: Type.String({ description: 'YYYY-MM or YYYY-MM-DD' }),
        rate: Type.String({ description: 'Units of base per unit of currency, exact decimal text.' }),
      }),
    ),
  },
  { $id: 'ExchangeRates' },
);

const Money = (description: string) =>
  Type.String({
    description: `${description} Money as exact decimal text in the major unit ("49", "-12.5").`,
  });
const currencyQuery = Type.Optional(
  Type.String({
    pattern: '^[A-Za-z]{3}$',
    description: 'Currency (default USD); never summed across currencies.',
  }),
);
const byQuery = Type.Optional(
  Type.Union(
    ATTRIBUTION_DIMENSIONS.map((d) => Type.Literal(d)),
    { description: "Group by the touch's channel (default), source or utm_campaign." },
  ),
);
const touchQuery = Type.Optional(
  Type.Union(
    TOUCHES.map((t) => Type.Literal(t)),
    {
      description:
        "`first` (default): the customer's earliest visit; `last`: its last visit that started before its first revenue record.",
    },
  ),
);

/** `convert_to` of the period reports (attribution, breakdown): each amount at its own month's rate. */
const convertGroupsQuery = Type.Optional(
  Type.String({
    pattern: '^[A-Za-z]{3}$',
    description:
      "Convert every currency (or `currency`) with the operator's loaded rates and add them up: each movement " +
      "and payment at its month's rate, the MRR at the end at the last month's; the answer is marked " +
      '`converted_to`, with the rates used and the currencies left out for want of a rate. 400 when no rates ' +
      'to this currency are loaded.',
  }),
);
/** What a converted answer adds (exchange-rates.ts). */
const convertedFields = {
  converted_to: Type.Optional(Type.String({ description: 'With convert_to: the currency converted to.' })),
  rates: Type.Optional(
    Type.Array(Type.Object({ currency: Type.String(), period: Type.String(), rate: Type.String() }), {
      description: 'With convert_to: every rate used.',
    }),
  ),
  missing_currencies: Type.Optional(
    Type.Array(Type.String(), { description: 'With convert_to: currencies left out for want of a rate.' }),
  ),
};

export const AttributionQuery = Type.Object({
  from: MrrQuery.properties.from,
  to: MrrQuery.properties.to,
  currency: currencyQuery,
  by: byQuery,
  touch: touchQuery,
  filters: revenueFilters,
  convert_to: convertGroupsQuery,
  format: rangeQuery.format,
});
const attributionFigures = {
  customers: Type.Integer({
    description: 'Customers with a revenue record (of the currency) up to the end.',
  }),
  paying_customers: Type.Integer({ description: 'Customers with MRR above zero at the end.' }),
  new: Money('New business MRR in the period.'),
  expansion: Money('Expansion MRR.'),
  reactivation: Money('Reactivation MRR.'),
  contraction: Money('Contraction MRR (positive).'),
  churn: Money('Churned MRR (positive).'),
  mrr_end: Money('MRR at the end of the period.'),
  cash_revenue: Money('Sum of amount over the period (refunds subtract).'),
};
export const AttributionRow = Type.Object(
  {
    key: Type.String({
      description:
        'The group: a channel, source or campaign, `(none)` when empty, `(unattributed)` without a linked visit.',
    }),
    ...attributionFigures,
  },
  { $id: 'AttributionRow' },
);
export const Attribution = Type.Object(
  {
    from: Type.String(),
    to: Type.String(),
    currency: Type.String(),
    by: Type.String(),
    touch: Type.String(),
    rows: Type.Array(Type.Ref(AttributionRow)),
    total: Type.Object(attributionFigures, {
      description: 'The unbroken figures; every column of rows adds up to it exactly.',
    }),
    ...convertedFields,
  },
  { $id: 'Attribution' },
);

export const ReconciliationQuery = Type.Object({
  month: Type.String({ pattern: MONTH_PATTERN, description: 'The month (YYYY-MM, UTC).' }),
  currency: currencyQuery,
});
export const Reconciliation = Type.Object(
  {
    month: Type.String(),
    currency: Type.String(),
    cash: Type.Object(
      {
        recurring: Money('subscription, renewal, upgrade and downgrade records.'),
        one_off: Money('purchase records.'),
        refunds: Money('refund records.'),
        churn: Money('churn records.'),
        unlabelled: Money('Records without event_type.'),
        total: Money('All of the month’s cash revenue: the sum of the kinds.'),
        records: Type.Integer(),
      },
      {
        description:
          'recurring: subscription, renewal, upgrade, downgrade; one_off: purchase; refunds; churn amounts; unlabelled: records without event_type.',
      },
    ),
    bridge: Type.Object({
      mrr_start: Money('MRR at the start.'),
      new: Money(''),
      expansion: Money(''),
      reactivation: Money(''),
      contraction: Money(''),
      churn: Money(''),
      computed_end: Money('start + new + expansion + reactivation − contraction − churn.'),
      mrr_end: Money('MRR at the end.'),
      closes: Type.Boolean({ description: 'false is an error: computed_end differs from mrr_end.' }),
    }),
    stored_movements: nullable(
      Type.Object(
        {
          new: Money(''),
          expansion: Money(''),
          reactivation: Money(''),
          contraction: Money(''),
          churn: Money(''),
        },
        { description: 'The month’s movements as the mrr_movements table holds them.' },
      ),
    ),
    warnings: Type.Array(
      Type.Object({
        message: Type.String(),
        customer_id: Type.String(),
        transaction_id: Type.String(),
        record_ids: Type.Array(Type.String()),
        timestamp: Type.String(),
      }),
    ),
    errors: Type.Array(Type.String(), { description: 'What does not add up; empty when everything closes.' }),
  },
  { $id: 'Reconciliation' },
);

export const CustomersQuery = Type.Object({
  currency: currencyQuery,
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Default 100.' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000_000 })),
  search: Type.Optional(
    Type.String({
      maxLength: 200,
      description: 'Only the customers whose id, name or email contains it, case aside.',
    }),
  ),
  status: Type.Optional(
    Type.Union([Type.Literal('active'), Type.Literal('churned'), Type.Literal('one_off')], {
      description: 'Only the customers of this status.',
    }),
  ),
  sort: Type.Optional(
    Type.Union(
      [Type.Literal('mrr'), Type.Literal('cash'), Type.Literal('first_seen'), Type.Literal('customer_id')],
      { description: 'MRR now (default), lifetime cash, first seen or id.' },
    ),
  ),
  order: Type.Optional(
    Type.Union([Type.Literal('asc'), Type.Literal('desc')], {
      description: 'Default: descending for mrr and cash, ascending for first_seen and customer_id.',
    }),
  ),
  convert_to: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z]{3}$',
      description:
        "Convert every currency (or `currency`) with the operator's loaded rates: one row per customer, its " +
        "MRR now at each currency's latest loaded rate and its cash at each record's month's rate, added up; " +
        'the answer names the rates used and the currencies left out. 400 when no rates to this currency are ' +
        'loaded.',
    }),
  ),
  filters: revenueFilters,
  format: rangeQuery.format,
});
const FirstTouch = nullable(
  Type.Object({ channel: Type.String(), source: Type.String(), utm_campaign: Type.String() }),
);
export const CustomerSummary = Type.Object(
  {
    customer_id: Type.String(),
    name: nullable(
      Type.String({ description: "From the customer's latest revenue record whose metadata has a `name`." }),
    ),
    email: nullable(
      Type.String({
        description: "From the customer's latest revenue record whose metadata has an `email`.",
      }),
    ),
    currency: Type.String(),
    mrr: Money('MRR now.'),
    status: Type.Union([Type.Literal('active'), Type.Literal('churned'), Type.Literal('one_off')]),
    first_seen: Type.String(),
    first_touch: FirstTouch,
    cash_revenue: Money('Lifetime cash revenue.'),
    records: Type.Integer(),
  },
  { $id: 'CustomerSummary' },
);
export const CustomerList = Type.Object(
  {
    currency: Type.String(),
    total: Type.Integer({ description: 'Customers with a record of the currency.' }),
    offset: Type.Integer(),
    customers: Type.Array(Type.Ref(CustomerSummary)),
    ...convertedFields,
  },
  { $id: 'CustomerList' },
);
export const CustomerParams = Type.Object({
  ...ProjectParams.properties,
  customer_id: Type.String({ minLength: 1, maxLength: 512 }),
});
const Touchpoint = Type.Object({
  visitor_id: Type.String(),
  start: Type.String(),
  channel: Type.String(),
  source: Type.String(),
  utm_source: Type.String(),
  utm_medium: Type.String(),
  utm_campaign: Type.String(),
  entry_path: Type.String(),
});
/** A revenue record as stored (the customer page's records, the metadata search's). */
const StoredRevenueRecord = Type.Object({
  id: Type.String(),
  transaction_id: Type.String(),
  timestamp: Type.String(),
  received_at: Type.String(),
  timestamp_clamped: Type.Boolean(),
  data: Type.Record(Type.String(), Type.Unknown(), { description: 'The payload as received.' }),
});
/** …/revenue/customers/{customer_id}: only convert_to (the summaries converted as the list's row). */
export const CustomerQuery = Type.Object({
  convert_to: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z]{3}$',
      description:
        "Convert the customer's summaries with the operator's loaded rates into one, as the customers list " +
        "converts its row (MRR now at each currency's latest rate, cash at each record's month's rate); the " +
        'history, records and visits stay as recorded. 400 when no rates to this currency are loaded.',
    }),
  ),
});
export const CustomerPage = Type.Object(
  {
    customer_id: Type.String(),
    summaries: Type.Array(Type.Ref(CustomerSummary), {
      description: 'One per currency; with convert_to, one in the currency converted to.',
    }),
    ...convertedFields,
    first_touch: nullable(Touchpoint),
    last_touch: nullable(Touchpoint),
    identified_at: nullable(Type.String()),
    history: Type.Array(
      Type.Object({
        timestamp: Type.String(),
        transaction_id: Type.String(),
        currency: Type.String(),
        subscription: Type.String({ description: "'' is the default subscription." }),
        subscription_mrr: Money(''),
        customer_mrr: Money(''),
        movement: nullable(Type.String()),
        warning: nullable(Type.String()),
      }),
      { description: 'MRR after each record, per subscription.' },
    ),
    records: Type.Array(StoredRevenueRecord),
    visits: Type.Array(
      Type.Object({
        visitor_id: Type.String(),
        start: Type.String(),
        end: Type.String(),
        channel: Type.String(),
        source: Type.String(),
        utm_campaign: Type.String(),
        entry_path: Type.String(),
        pageviews: Type.Array(Type.Object({ timestamp: Type.String(), path: Type.String() })),
        events: Type.Array(Type.Object({ timestamp: Type.String(), name: Type.String() })),
      }),
      { description: "The visits of the customer's visitors (at most 500, oldest first)." },
    ),
  },
  { $id: 'CustomerPage' },
);

export const RecordsQuery = Type.Object({
  figure: Type.Union(
    DRILLDOWN_FIGURES.map((f) => Type.Literal(f)),
    { description: 'The figure to open.' },
  ),
  from: MrrQuery.properties.from,
  to: MrrQuery.properties.to,
  currency: currencyQuery,
  by: byQuery,
  touch: touchQuery,
  key: Type.Optional(
    Type.String({
      maxLength: 512,
      description: 'Only the customers of this attribution group (with by and touch).',
    }),
  ),
  filters: revenueFilters,
  offset: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 10_000_000, description: 'The first item to list (default 0).' }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 10_000_000,
      description: 'How many items to list from offset (default: all). count and total are the whole figure.',
    }),
  ),
  format: rangeQuery.format,
});
export const Drilldown = Type.Object(
  {
    figure: Type.String(),
    from: Type.String(),
    to: Type.String(),
    currency: Type.String(),
    group: nullable(Type.Object({ by: Type.String(), touch: Type.String(), key: Type.String() })),
    total: Money('The figure: the sum of all its items (for paying_customers, their number).'),
    count: Type.Integer({ description: 'How many items make up the figure (all of them).' }),
    offset: Type.Integer({ description: 'Where the items listed start among them.' }),
    items: Type.Array(
      Type.Object({
        customer_id: Type.String(),
        transaction_id: nullable(Type.String()),
        record_id: nullable(Type.String()),
        timestamp: nullable(Type.String()),
        event_type: nullable(Type.String()),
        movement: nullable(Type.String()),
        amount: Money("The item's share of the figure."),
      }),
    ),
  },
  { $id: 'Drilldown' },
);

export const FunnelQuery = Type.Object({
  from: rangeQuery.from,
  to: rangeQuery.to,
  by: byQuery,
  currency: currencyQuery,
  convert_to: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z]{3}$',
      description:
        "Convert the customers' money of every currency (or `currency`) with the operator's loaded rates, as " +
        "the customers list: MRR now at each currency's latest rate, cash at each payment's month's rate; the " +
        'answer names the rates used and the currencies left out. 400 when no rates to this currency are loaded.',
    }),
  ),
  format: rangeQuery.format,
});
const funnelFigures = {
  visitors: Type.Integer({
    description: "Visitors whose first visit fell in the range (the project's days).",
  }),
  identified: Type.Integer({ description: 'Of them, linked to a customer.' }),
  paying: Type.Integer({ description: 'Of them, linked to a customer who ever had MRR or made a purchase.' }),
  identified_rate: nullable(Type.Number()),
  paying_rate: nullable(Type.Number()),
  paying_customers: Type.Integer(),
  mrr: Money('MRR now of those customers.'),
  cash_revenue: Money('Their cash revenue to date.'),
  mrr_per_1000_visitors: nullable(Money('')),
};
export const AcquisitionFunnel = Type.Object(
  {
    from: Type.String(),
    to: Type.String(),
    by: Type.String(),
    currency: Type.String(),
    rows: Type.Array(Type.Object({ key: Type.String(), ...funnelFigures })),
    total: Type.Object(funnelFigures),
    ...convertedFields,
  },
  { $id: 'AcquisitionFunnel' },
);

export const HealthQuery = Type.Object({
  stall_minutes: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 1440,
      description: 'Minutes without records after which a type is stalled (default 15).',
    }),
  ),
});
export const Health = Type.Object(
  {
    generated_at: Type.String(),
    stall_minutes: Type.Integer(),
    types: Type.Array(
      Type.Object({
        type: Type.String(),
        last_received_at: nullable(Type.String()),
        minutes_since_last: nullable(Type.Integer()),
        status: Type.Union([
          Type.Literal('ok'),
          Type.Literal('stalled'),
          Type.Literal('idle'),
          Type.Literal('none'),
        ]),
        landed_last_hour: Type.Integer(),
        per_minute: Type.Array(Type.Integer(), { description: 'The last 60 minutes, oldest first.' }),
      }),
    ),
    consumer_groups: nullable(
      Type.Array(
        Type.Object({
          group: Type.String(),
          topic: Type.String(),
          lag: Type.Integer({ description: 'Records in the log the group has not committed yet.' }),
          oldest_at: nullable(
            Type.String({
              description:
                'When the oldest of them reached the log (embedded: its received_at; Kafka: the message timestamp, to the second).',
            }),
          ),
          oldest_age_seconds: nullable(Type.Integer()),
          retention_seconds: nullable(
            Type.Integer({
              description:
                "How long the log keeps the topic's records whether the group has read them or not: Kafka's retention.ms of the topic, as the brokers have it. Null when unbounded or unknown, and on the embedded log, which keeps a record until every group has committed past it.",
            }),
          ),
          near_retention: Type.Boolean({
            description:
              'Whether the oldest record not landed is older than 80% of retention_seconds: Kafka deletes a record once older than its retention, landed or not, so the group must catch up before then.',
          }),
        }),
        { description: 'Of the whole record log (every project): the log is shared. Null when unavailable.' },
      ),
    ),
    consumers: nullable(
      Type.Array(
        Type.Object({
          group: Type.String(),
          lag: Type.Integer({ description: 'Records waiting for the group (every project).' }),
          status: Type.Union([Type.Literal('ok'), Type.Literal('stalled')]),
          stalled_since: nullable(
            Type.String({ description: 'Since when records have waited with no batch committed.' }),
          ),
          stalled_seconds: nullable(Type.Integer()),
          reason: nullable(
            Type.String({
              description:
                "Why it is stalled: the consumers' own words (the failure's kind, class and codes, never a record's values), or what the log shows.",
            }),
          ),
          source: Type.Union([Type.Literal('consumers'), Type.Literal('log')], {
            description:
              'consumers: the consumers run in this process (npm start) and tell their progress (stalled: records waiting and no batch committed for CONSUMER_STALL_MS). log: a dashboard of its own sees the log only (stalled: the oldest record not landed has waited longer than CONSUMER_STALL_MS, whether the group is stuck or catching up).',
          }),
        }),
        {
          description:
            "Each consumer group's progress. Null when the dashboard has neither the consumers nor the log.",
        },
      ),
    ),
    ingestion_held_back: nullable(
      Type.Object(
        {
          since: Type.String({ description: 'When the gateway started answering 503.' }),
          held_seconds: Type.Integer(),
          group: Type.String({ description: 'The consumer group furthest behind, at the last reading.' }),
          lag: Type.Integer({ description: 'Its records waiting, at the last reading (every project).' }),
          max_lag: Type.Integer({ description: 'GATEWAY_MAX_CONSUMER_LAG.' }),
          reopens_below: Type.Integer({
            description: 'The lag under which ingestion is accepted again (90% of max_lag).',
          }),
        },
        {
          description:
            "Under npm start, while a consumer group has GATEWAY_MAX_CONSUMER_LAG records waiting, the gateway answers every ingestion request 503 with Retry-After (clients retry; nothing acknowledged is lost) until the group has caught up. Null while ingestion is accepted, and where the consumers do not run in the gateway's process (a gateway on its own never holds ingestion back for them).",
        },
      ),
    ),
    oldest_not_landed: nullable(
      Type.Object(
        {
          group: Type.String(),
          topic: Type.String(),
          at: Type.String(),
          age_seconds: Type.Integer(),
        },
        {
          description:
            'The oldest record of the log some consumer group has not landed (of every project); null when none is behind or the lag is unavailable.',
        },
      ),
    ),
    log_settings: nullable(
      Type.Object(
        {
          checked_at: Type.String({ description: 'When the brokers were asked.' }),
          mismatches: Type.Array(
            Type.Object({
              topic: Type.String(),
              setting: Type.Union([
                Type.Literal('partitions'),
                Type.Literal('replication.factor'),
                Type.Literal('min.insync.replicas'),
                Type.Literal('retention.ms'),
                Type.Literal('retention.bytes'),
              ]),
              expected: Type.Integer({ description: 'What the configuration says.' }),
              actual: Type.Integer({ description: 'What the topic has.' }),
              configured_by: Type.String({
                description: 'The setting that says it: KAFKA_PARTITIONS, LOG_RETENTION_HOURS, …',
              }),
            }),
            {
              description:
                "Each setting of the log's Kafka topics that differs from the configuration. Tally never changes an existing topic: alter the topic, or the setting.",
            },
          ),
        },
        {
          description:
            "The Kafka topics' settings compared with the configuration (asked at each request). Null on the embedded log, which has none to compare, or when the brokers did not answer (see unavailable).",
        },
      ),
    ),
    dead_letters: nullable(
      Type.Object({
        count: Type.Integer(),
        by_reason: Type.Array(
          Type.Object({ type: Type.String(), error_code: Type.String(), count: Type.Integer() }),
        ),
        recent: Type.Array(
          Type.Object({
            id: Type.String(),
            type: Type.String(),
            error_code: Type.String(),
            failed_at: Type.String(),
          }),
        ),
      }),
    ),
    refused: nullable(
      Type.Object(
        {
          from: Type.String({ description: 'Start of the first hour counted (the last 24 hours, UTC).' }),
          hours: Type.Array(
            Type.Object({ hour: Type.String(), status: Type.Integer(), count: Type.Integer() }),
            { description: 'Refusals per hour and status; hours without refusals are absent.' },
          ),
          by_status: Type.Array(Type.Object({ status: Type.Integer(), count: Type.Integer() })),
          total: Type.Integer(),
        },
        {
          description:
            "Requests to POST /api/ingest the gateway refused for this project: those whose project it knew (a verified token in the body or a valid X-API-Token header: 400, 403, 413, 429, 503, …). A 401 has no project and is never counted; neither is a refusal answered before a body's token was read (a 429 or 413 with the token only in the body). Counts reach the dashboard within REFUSAL_FLUSH_MS.",
        },
      ),
    ),
    lost_records: nullable(
      Type.Object(
        {
          parts: Type.Array(
            Type.Object({
              table: Type.String(),
              part: Type.String(),
              reason: Type.String({ description: "The engine's reason: broken-on-start, broken, …" }),
            }),
          ),
          action: Type.String({ description: 'What the operator does to land the records again.' }),
        },
        {
          description:
            'Parts of the warehouse the engine found damaged and detached (system.detached_parts), whose records are missing from every figure until they are landed again from the record log (`tally warehouse reland`, with Tally stopped). Of the whole warehouse, every project. Null when none is missing (or when it cannot be told: see unavailable).',
        },
      ),
    ),
    unavailable: Type.Array(Type.String(), { description: 'What this deployment cannot tell, and why.' }),
  },
  { $id: 'Health' },
);

export type SummaryBody = Static<typeof Summary>;
export type PeriodSummaryBody = Static<typeof PeriodSummary>;
export type TimeseriesBody = Static<typeof Timeseries>;
export type TimeseriesPointBody = Static<typeof TimeseriesPoint>;
export type BreakdownBody = Static<typeof Breakdown>;
export type BreakdownRowBody = Static<typeof BreakdownRow>;
export type GoalInputBody = Static<typeof GoalInput>;
export type FunnelInputBody = Static<typeof FunnelInput>;
export type ShareInputBody = Static<typeof ShareInput>;

// ---- Revenue breakdown and metadata search ---------------------------------------------------------

export const RevenueBreakdownQuery = Type.Object({
  from: MrrQuery.properties.from,
  to: MrrQuery.properties.to,
  currency: currencyQuery,
  by: Type.String({
    maxLength: 210,
    description:
      'The attribute: `plan`, `interval`, `coupon`, `source`, `campaign` (metadata keys), `payment_processor` ' +
      "or `metadata.<key>`. A customer's value is the one on its latest revenue record up to the end of the " +
      'range that has one; `(none)` when none has.',
  }),
  filters: revenueFilters,
  convert_to: convertGroupsQuery,
  format: rangeQuery.format,
});
export const RevenueBreakdown = Type.Object(
  {
    from: Type.String(),
    to: Type.String(),
    currency: Type.String(),
    by: Type.String(),
    rows: Type.Array(Type.Ref(AttributionRow)),
    total: Type.Object(attributionFigures, {
      description: "The unbroken figures (the MRR report's); every column of rows adds up to it exactly.",
    }),
    metadata_keys: Type.Array(Type.String(), {
      description: "The metadata keys of the project's revenue records (at most 200), to break down by.",
    }),
    ...convertedFields,
  },
  { $id: 'RevenueBreakdown' },
);
export const RevenueSearchQuery = Type.Object({
  key: Type.String({ minLength: 1, maxLength: 200, description: 'A metadata key.' }),
  value: Type.String({ maxLength: 1000, description: 'Its value, compared as text.' }),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Default 100.' })),
});
export const RevenueSearch = Type.Object(
  {
    records: Type.Array(StoredRevenueRecord, { description: 'Oldest first, as `tally revenue search`.' }),
  },
  { $id: 'RevenueSearch' },
);

// ---- Alerts (docs/alerts.md) -------------------------------------------------------------------------

const ALERT_FIELDS = {
  kind: Type.String({
    description:
      '`stalled` (a record type has not landed for `threshold` minutes), `dead_letters` (more than ' +
      '`threshold` dead letters in the last hour), `traffic` (pageviews of the last complete UTC hour ' +
      '`threshold` percent up or down on the same hour a week before), `mrr_churn` (MRR churned, churn + ' +
      'contraction, over `threshold` in the UTC day).',
  }),
  threshold: Type.Number({
    description:
      'stalled: minutes (1 to 10080); dead_letters: a count (0 to 1000000); traffic: percent (1 to 10000, a drop at most 100); mrr_churn: an amount (at most 6 decimal places).',
  }),
  record_type: Type.Optional(
    Type.String({ description: 'stalled: pageview, event, identify or revenue.', maxLength: 32 }),
  ),
  direction: Type.Optional(Type.String({ description: 'traffic: `spike` or `drop`.', maxLength: 16 })),
  min_baseline: Type.Optional(
    Type.Integer({
      description:
        'traffic: the fewest pageviews the hour a week before must have to be compared with (default 20).',
    }),
  ),
  currency: Type.Optional(
    nullable(
      Type.String({
        maxLength: 3,
        description: 'mrr_churn: the currency watched (ISO 4217); null or absent: each currency.',
      }),
    ),
  ),
  emails: Type.Optional(
    Type.Array(Type.String({ maxLength: 320 }), {
      maxItems: 20,
      description: 'Members of the project told by email.',
    }),
  ),
  webhook_url: Type.Optional(
    nullable(
      Type.String({
        maxLength: 2048,
        description: 'An http(s) URL POSTed the JSON body of docs/alerts.md; null: none.',
      }),
    ),
  ),
};
export const AlertRuleInput = Type.Object(ALERT_FIELDS, { additionalProperties: false });
export const AlertRulePatch = Type.Object(
  {
    ...ALERT_FIELDS,
    kind: Type.Optional(ALERT_FIELDS.kind),
    threshold: Type.Optional(ALERT_FIELDS.threshold),
  },
  { additionalProperties: false },
);
export const AlertState = Type.Object({
  status: Type.Union(
    [Type.Literal('ok'), Type.Literal('firing'), Type.Literal('cannot_evaluate'), Type.Literal('pending')],
    {
      description:
        '`pending`: not evaluated yet; `cannot_evaluate`: `reason` says why (it never fires then).',
    },
  ),
  since: nullable(Type.String({ description: 'Firing: when its incident started.' })),
  reason: nullable(Type.String()),
  evaluated_at: nullable(Type.String()),
  pending_deliveries: Type.Integer({
    description: 'Messages not delivered yet, tried again at each evaluation.',
  }),
  last_delivery_error: nullable(Type.String()),
});
export const AlertRule = Type.Object(
  {
    id: Type.String(),
    kind: Type.String(),
    description: Type.String({ description: 'The rule in words.' }),
    threshold: Type.Number(),
    record_type: Type.Optional(Type.String()),
    direction: Type.Optional(Type.String()),
    min_baseline: Type.Optional(Type.Integer()),
    currency: Type.Optional(nullable(Type.String())),
    emails: Type.Array(Type.String()),
    webhook_url: nullable(
      Type.String({ description: 'Its origin only (`https://hooks.example/…`) for a viewer.' }),
    ),
    created_by: Type.String(),
    created_at: Type.String(),
    state: AlertState,
  },
  { $id: 'AlertRule' },
);
export const AlertRules = Type.Object(
  { rules: Type.Array(Type.Ref(AlertRule), { description: 'Firing first, then oldest first.' }) },
  { $id: 'AlertRules' },
);
export const AlertIdParams = Type.Object({
  ...ProjectParams.properties,
  alert: Type.String({ maxLength: 64 }),
});

/** Every schema with an $id: the OpenAPI document's components. */
export const COMPONENTS: TSchema[] = [
  Message,
  ErrorBody,
  PeriodSummary,
  Summary,
  TimeseriesPoint,
  Timeseries,
  BreakdownRow,
  Breakdown,
  CurrentVisitors,
  RealtimeRow,
  Realtime,
  Goal,
  Goals,
  Funnel,
  Funnels,
  GoalConversions,
  FunnelResult,
  Annotation,
  Annotations,
  Member,
  Members,
  Invitation,
  Invitations,
  InvitationCreated,
  InvitationView,
  Segment,
  Segments,
  Project,
  Projects,
  Install,
  CreatedToken,
  SessionInfo,
  PasswordResetAnswer,
  Share,
  Shares,
  CreatedShare,
  SharedInfo,
  ShareGrant,
  MrrMonths,
  MrrDays,
  RevenueCurrencies,
  RevenueCohorts,
  ExchangeRates,
  AttributionRow,
  Attribution,
  Reconciliation,
  CustomerSummary,
  CustomerList,
  CustomerPage,
  Drilldown,
  AcquisitionFunnel,
  Health,
  RevenueBreakdown,
  RevenueSearch,
  AlertRule,
  AlertRules,
];

/** A member's scheduled email reports of a project (docs/design/scheduled-reports.md). */
export const ReportSubscription = Type.Object(
  {
    weekly: Type.Boolean({
      description:
        "The weekly report (Monday to Sunday), sent on Monday at 08:00 in the project's time zone.",
    }),
    monthly: Type.Boolean({
      description:
        "The monthly report, sent on the first of the next month at 08:00 in the project's time zone.",
    }),
  },
  { additionalProperties: false },
);
