// The time series of the chosen figure, with the comparison period drawn beside it (the n-th bucket of the
// previous period under the n-th of this one), drawn by uPlot on a canvas. The x axis is the bucket's index,
// labelled with the bucket's own date as the API gives it in the project's time zone, so the browser's zone
// never shifts a day. A hidden table gives screen readers the same numbers.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { Compare, Interval, Timeseries, TimeseriesPoint } from '../api/types.ts';
import { useQuery } from '../api/use-query.ts';
import { formatCount, formatDecimal, formatDuration, formatPercent } from '../format.ts';
import { formatDay } from '../query/range.ts';
import type { Metric } from '../query/view-state.ts';
import { useTraffic } from '../views/traffic-context.ts';
import { CsvButton } from './csv-button.tsx';
import { ErrorMessage } from './messages.tsx';

const METRIC_LABELS: Record<Metric, string> = {
  visitors: 'Unique visitors',
  visits: 'Visits',
  pageviews: 'Pageviews',
  views_per_visit: 'Views per visit',
  bounce_rate: 'Bounce rate',
  visit_duration_s: 'Visit duration',
  events: 'Custom events',
};
const INTERVAL_NAMES: Record<Interval, string> = { hour: 'hour', day: 'day', week: 'week', month: 'month' };
/** Whole-number steps for the y axis of counts (a count of 1.5 visitors is no tick). */
const COUNT_STEPS = [
  1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 1e7, 1e8,
];
const isCount = (metric: Metric) =>
  metric === 'visitors' || metric === 'visits' || metric === 'pageviews' || metric === 'events';

export function metricValue(point: TimeseriesPoint, metric: Metric): number | null {
  if (metric === 'views_per_visit') return point.visits > 0 ? point.pageviews / point.visits : null;
  return point[metric];
}

export function formatMetric(metric: Metric, value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  if (metric === 'bounce_rate') return formatPercent(value);
  if (metric === 'visit_duration_s') return formatDuration(value);
  if (metric === 'views_per_visit') return formatDecimal(value);
  return formatCount(value);
}

/** A bucket's label: "10:00" for hours of one day, "12 Mar" for days and weeks, "Mar 2025" for months. */
export function bucketLabel(date: string, interval: Interval, oneDay: boolean): string {
  if (interval === 'hour')
    return oneDay ? date.slice(11, 16) : `${formatDay(date.slice(0, 10)).slice(0, -5)} ${date.slice(11, 16)}`;
  if (interval === 'month')
    return formatDay(`${date.slice(0, 7)}-01`)
      .slice(2)
      .trim();
  return formatDay(date).slice(0, -5);
}

function cssColor(element: Element, name: string): string {
  return getComputedStyle(element).getPropertyValue(name).trim() || '#888';
}

export function TimeChart({ metric, compare }: { metric: Metric; compare: Compare }) {
  const { api, project, params, interval, range, fileName } = useTraffic();
  const path = `/projects/${encodeURIComponent(project.id)}/traffic/timeseries`;
  const series = useQuery<Timeseries>(api, path, { ...params, interval, compare });
  const container = useRef<HTMLDivElement>(null);
  const data = series.data;
  const label = METRIC_LABELS[metric];

  useEffect(() => {
    const element = container.current;
    if (!element || !data) return;
    const oneDay = range.from === range.to;
    const labels = data.points.map((p) => bucketLabel(p.date, data.interval, oneDay));
    const previousLabels = data.previous?.points.map((p) => bucketLabel(p.date, data.interval, false)) ?? [];
    const current = data.points.map((p) => metricValue(p, metric));
    const previous = data.previous ? data.previous.points.map((p) => metricValue(p, metric)) : null;
    const xs = data.points.map((_, i) => i);
    let chart: uPlot | null = null;

    const build = () => {
      chart?.destroy();
      const accent = cssColor(element, '--chart-current');
      const faded = cssColor(element, '--chart-previous');
      const grid = cssColor(element, '--grid');
      const text = cssColor(element, '--text-muted');
      const axis = { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
      const opts: uPlot.Options = {
        width: Math.max(element.clientWidth, 280),
        height: element.clientWidth < 600 ? 200 : 260,
        scales: { x: { time: false }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
        cursor: { drag: { x: false, y: false } },
        legend: { live: true },
        axes: [
          {
            ...axis,
            values: (_u, splits) => splits.map((i) => (Number.isInteger(i) ? (labels[i] ?? '') : '')),
            space: 60,
          },
          {
            ...axis,
            size: 56,
            ...(isCount(metric) ? { incrs: COUNT_STEPS } : {}),
            values: (_u, splits) => splits.map((v) => formatMetric(metric, v)),
          },
        ],
        series: [
          {
            label: data.interval === 'hour' ? 'Time' : 'Date',
            value: (_u, i) => (i === null ? '' : (labels[i] ?? '')),
          },
          {
            label,
            stroke: accent,
            width: 2,
            fill: cssColor(element, '--chart-fill'),
            points: { show: xs.length < 40 },
            value: (_u, v) => formatMetric(metric, v),
          },
          ...(previous
            ? [
                {
                  label: compare === 'year' ? 'A year before' : 'Previous period',
                  stroke: faded,
                  width: 1.5,
                  dash: [5, 4],
                  points: { show: false },
                  value: (u: uPlot, v: number | null) => {
                    const i = u.cursor.idx;
                    const at = i === null || i === undefined ? '' : ` (${previousLabels[i] ?? ''})`;
                    return v === null ? '—' : `${formatMetric(metric, v)}${at}`;
                  },
                } satisfies uPlot.Series,
              ]
            : []),
        ],
      };
      const aligned: uPlot.AlignedData = previous ? [xs, current, previous] : [xs, current];
      chart = new uPlot(opts, aligned, element);
    };
    build();
    let width = element.clientWidth;
    const resize = new ResizeObserver(() => {
      if (chart && element.clientWidth !== width) {
        width = element.clientWidth;
        chart.setSize({ width: Math.max(width, 280), height: width < 600 ? 200 : 260 });
      }
    });
    resize.observe(element);
    const scheme = matchMedia('(prefers-color-scheme: dark)');
    scheme.addEventListener('change', build);
    return () => {
      resize.disconnect();
      scheme.removeEventListener('change', build);
      chart?.destroy();
    };
  }, [data, metric, compare, range.from, range.to, label]);

  return (
    <section class="card chart-card" aria-labelledby="chart-title">
      <div class="card-head">
        <h2 id="chart-title">
          {label} <span class="muted">per {INTERVAL_NAMES[interval]}</span>
        </h2>
        <CsvButton
          label="Time series"
          path={path}
          params={{ ...params, interval, compare }}
          fileName={fileName(`timeseries-${interval}`)}
        />
      </div>
      {series.error ? (
        <ErrorMessage error={series.error} what="The time series" onRetry={series.reload} />
      ) : (
        <div
          ref={container}
          class={series.stale || series.loading ? 'chart is-stale' : 'chart'}
          role="img"
          aria-label={`${label} per ${INTERVAL_NAMES[interval]}, ${range.from} to ${range.to}${data?.previous ? ', with the comparison period dashed' : ''}`}
        />
      )}
      {data && (
        // A table cannot be shrunk to the 1px of .sr-only: wrapped, it never widens a narrow page.
        <div class="sr-only">
          <table>
            <caption>
              {label} per {INTERVAL_NAMES[data.interval]}
            </caption>
            <thead>
              <tr>
                <th scope="col">Period</th>
                <th scope="col">{label}</th>
                {data.previous && <th scope="col">Comparison</th>}
              </tr>
            </thead>
            <tbody>
              {data.points.map((p, i) => (
                <tr key={p.date}>
                  <th scope="row">{p.date}</th>
                  <td>{formatMetric(metric, metricValue(p, metric))}</td>
                  {data.previous && (
                    <td>
                      {formatMetric(
                        metric,
                        data.previous.points[i] ? metricValue(data.previous.points[i], metric) : null,
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
