// The top figures of the range with their change against the comparison period; choosing one draws it in
// the time series. Current visitors is not a figure of the range: it is the last 5 minutes, refreshed.
// When the summary fails, the figures say so (with a Retry) and the rest of the page stays.
import { useState } from 'preact/hooks';
import type { Compare, PeriodSummary, Summary } from '../api/types.ts';
import { useQuery } from '../api/use-query.ts';
import { type Change, change, formatCount, formatDecimal, formatDuration, formatPercent } from '../format.ts';
import type { Metric } from '../query/view-state.ts';
import { useTraffic } from '../views/traffic-context.ts';
import { ErrorMessage } from './messages.tsx';
import { useInterval } from './use-interval.ts';

interface FigureDef {
  metric: Metric;
  id: string;
  label: string;
  value(p: PeriodSummary): number | null;
  format(v: number | null): string;
  kind: 'count' | 'rate';
  lowerIsBetter?: boolean;
}

export const FIGURES: FigureDef[] = [
  {
    metric: 'visitors',
    id: 'visitors',
    label: 'Unique visitors',
    value: (p) => p.visitors,
    format: fmtCount,
    kind: 'count',
  },
  {
    metric: 'visits',
    id: 'visits',
    label: 'Visits',
    value: (p) => p.visits,
    format: fmtCount,
    kind: 'count',
  },
  {
    metric: 'pageviews',
    id: 'pageviews',
    label: 'Pageviews',
    value: (p) => p.pageviews,
    format: fmtCount,
    kind: 'count',
  },
  {
    metric: 'views_per_visit',
    id: 'views-per-visit',
    label: 'Views per visit',
    value: (p) => p.views_per_visit,
    format: formatDecimal,
    kind: 'count',
  },
  {
    metric: 'bounce_rate',
    id: 'bounce-rate',
    label: 'Bounce rate',
    value: (p) => p.bounce_rate,
    format: formatPercent,
    kind: 'rate',
    lowerIsBetter: true,
  },
  {
    metric: 'visit_duration_s',
    id: 'visit-duration',
    label: 'Visit duration',
    value: (p) => p.visit_duration_s,
    format: formatDuration,
    kind: 'count',
  },
];

function fmtCount(v: number | null) {
  return v === null ? '—' : formatCount(v);
}

const COMPARE_NAMES: Record<Compare, string> = {
  previous: 'the previous period',
  year: 'a year before',
  none: '',
};

/** The comparison's words when the range ends today: the period is not over, the one compared with is. */
function partialNote(compare: Compare, today: string, range: { from: string; to: string }): string | null {
  if (compare === 'none' || range.to !== today) return null;
  const what = range.from === range.to ? 'Today is' : 'The range ends today, which is';
  const whole = compare === 'year' ? 'the whole of the same days a year before' : 'the whole previous period';
  return `${what} not over: the changes compare it so far with ${whole}.`;
}

export function TopFigures(props: {
  summary: Summary | undefined;
  error?: Error | undefined;
  onRetry(): void;
  stale: boolean;
  metric: Metric;
  compare: Compare;
  onMetric(metric: Metric): void;
}) {
  const { summary } = props;
  const { project, range } = useTraffic();
  const partial = partialNote(props.compare, project.today, range);
  if (props.error) {
    return (
      <section class="top-figures" aria-label="Top figures">
        <ErrorMessage error={props.error} what="The top figures" onRetry={props.onRetry} />
      </section>
    );
  }
  return (
    <section
      class={props.stale ? 'top-figures is-stale' : 'top-figures'}
      aria-label="Top figures"
      aria-busy={props.stale}
    >
      <ul class="figures">
        {FIGURES.map((f) => {
          const current = summary ? f.value(summary) : null;
          const previous = summary?.previous ? f.value(summary.previous) : undefined;
          const delta = summary?.previous ? change(current, previous ?? null, f.kind, f.lowerIsBetter) : null;
          const selected = props.metric === f.metric;
          return (
            <li key={f.id}>
              <button
                type="button"
                class="figure"
                aria-pressed={selected}
                onClick={() => props.onMetric(f.metric)}
                title={
                  summary?.previous && previous !== undefined
                    ? `${f.format(previous)} in ${COMPARE_NAMES[props.compare]} (${summary.previous.from} to ${summary.previous.to})`
                    : undefined
                }
              >
                <span class="figure-label">{f.label}</span>
                <span class="figure-value" id={f.id}>
                  {summary ? f.format(current) : '…'}
                </span>
                <ChangeBadge change={delta} compare={props.compare} />
              </button>
            </li>
          );
        })}
        <li>
          <CurrentVisitors initial={summary?.current_visitors} />
        </li>
      </ul>
      <p class="caveat" id="visitor-caveat">
        Visitors without an id of their own are counted by a cookieless id that rotates daily, so a visitor
        who comes back on another day counts again.
      </p>
      {partial && (
        <p class="caveat" id="partial-caveat">
          {partial}
        </p>
      )}
    </section>
  );
}

function ChangeBadge({ change: c, compare }: { change: Change | null; compare: Compare }) {
  if (!c) return <span class="change none">{compare === 'none' ? '' : '—'}</span>;
  const arrow = c.direction === 'up' ? '↑' : c.direction === 'down' ? '↓' : '';
  const tone = c.good === null ? 'neutral' : c.good ? 'good' : 'bad';
  return (
    <span class={`change ${tone}`}>
      <span aria-hidden="true">{arrow ? `${arrow} ` : ''}</span>
      {c.text}
      <span class="sr-only"> against {COMPARE_NAMES[compare]}</span>
    </span>
  );
}

/** The summary's count, refreshed every 30 seconds while the page is open. */
function CurrentVisitors({ initial }: { initial: number | undefined }) {
  const { api, project, filters, params } = useTraffic();
  const [polling, setPolling] = useState(false);
  const live = useQuery<{ current_visitors: number }>(
    api,
    polling ? `/projects/${encodeURIComponent(project.id)}/traffic/current-visitors` : null,
    filters.length > 0 ? { filters: params.filters } : {},
  );
  useInterval(() => (polling ? live.reload() : setPolling(true)), 30_000);
  const value = live.data && !live.stale ? live.data.current_visitors : initial;
  return (
    <div class="figure current">
      <span class="figure-label">
        <span class="live-dot" aria-hidden="true" /> Current visitors
      </span>
      <span class="figure-value" id="current-visitors">
        {value === undefined ? '…' : formatCount(value)}
      </span>
      <span class="change neutral">last 5 minutes</span>
    </div>
  );
}
