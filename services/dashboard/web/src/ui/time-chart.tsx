// The time series of the chosen figure, with the comparison period drawn beside it (the n-th bucket of the
// previous period under the n-th of this one), drawn by uPlot on a canvas. The x axis is the bucket's index,
// labelled with the bucket's own date as the API gives it in the project's time zone, so the browser's zone
// never shifts a day. Buckets still to come are not drawn (a day not over is no fall to zero), the one now
// running is drawn dashed and a note under the chart says so; away from the chart, the legend shows the last
// bucket that is over. A hidden table gives screen readers the same numbers. The project's annotations
// are drawn as marker lines by a small uPlot plugin (a button per bucket with notes: its text on hover,
// focus or tap), and an editor adds one with the form under the chart.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type {
  Annotation,
  Annotations,
  Compare,
  Interval,
  Timeseries,
  TimeseriesPoint,
} from '../api/types.ts';
import { useQuery } from '../api/use-query.ts';
import { formatCount, formatDecimal, formatDuration, formatPercent } from '../format.ts';
import { annotationsPerBucket } from '../query/annotations.ts';
import { splitSeries, zonedNow } from '../query/buckets.ts';
import { formatDay } from '../query/range.ts';
import type { Metric } from '../query/view-state.ts';
import { useTraffic } from '../views/traffic-context.ts';
import { annotationMarkers } from './annotation-markers.ts';
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

/** The words of an interval's bucket now running, for the note under the chart. */
const CURRENT_NAMES: Record<Interval, string> = {
  hour: 'This hour',
  day: 'Today',
  week: 'This week',
  month: 'This month',
};

export function TimeChart({ metric, compare }: { metric: Metric; compare: Compare }) {
  const { api, project, params, interval, range, fileName } = useTraffic();
  const path = `/projects/${encodeURIComponent(project.id)}/traffic/timeseries`;
  const series = useQuery<Timeseries>(api, path, { ...params, interval, compare });
  const notesQuery = useQuery<Annotations>(api, `/projects/${encodeURIComponent(project.id)}/annotations`);
  const container = useRef<HTMLDivElement>(null);
  const data = series.data;
  const notes = useMemo(
    () =>
      data && notesQuery.data
        ? annotationsPerBucket(
            data.points.map((p) => p.date),
            range.to,
            notesQuery.data.annotations,
            data.time_zone,
          )
        : new Map<number, string[]>(),
    [data, notesQuery.data, range.to],
  );
  const label = METRIC_LABELS[metric];
  const oneDay = range.from === range.to;
  // Where each bucket stands against now, in the project's zone: future ones are not drawn (null, not 0),
  // the one running is drawn dashed.
  const split = useMemo(
    () =>
      data
        ? splitSeries(
            data.points.map((p) => p.date),
            data.points.map((p) => metricValue(p, metric)),
            data.interval,
            zonedNow(data.time_zone),
          )
        : null,
    [data, metric],
  );
  const labels = useMemo(
    () => data?.points.map((p) => bucketLabel(p.date, data.interval, oneDay)) ?? [],
    [data, oneDay],
  );

  useEffect(() => {
    const element = container.current;
    if (!element || !data || !split) return;
    const previousLabels = data.previous?.points.map((p) => bucketLabel(p.date, data.interval, false)) ?? [];
    const previous = data.previous ? data.previous.points.map((p) => metricValue(p, metric)) : null;
    const xs = data.points.map((_, i) => i);
    // Away from the chart, the legend shows the last bucket that is over (the running one when none is).
    const resting = split.lastComplete ?? split.current ?? (xs.length > 0 ? xs.length - 1 : null);
    const at = (i: number | null | undefined) => (i === null || i === undefined ? resting : i);
    const figureAt = (i: number | null) => {
      if (i === null) return '—';
      if (split.states[i] === 'future') return 'not yet';
      const text = formatMetric(metric, split.values[i]);
      return split.states[i] === 'current' ? `${text} so far` : text;
    };
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
        plugins: [annotationMarkers(notes)],
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
            value: (_u, _v, _s, i) => labels[at(i) ?? -1] ?? '',
          },
          {
            label,
            stroke: accent,
            width: 2,
            fill: cssColor(element, '--chart-fill'),
            points: { show: xs.length < 40 },
            value: (_u, _v, _s, i) => figureAt(at(i)),
          },
          {
            // The running bucket, from the last one that is over: dashed (its legend row is hidden below).
            label: `${label} so far`,
            stroke: accent,
            width: 2,
            dash: [4, 4],
            points: { show: true },
            value: () => '',
          },
          ...(previous
            ? [
                {
                  label: compare === 'year' ? 'A year before' : 'Previous period',
                  stroke: faded,
                  width: 1.5,
                  dash: [5, 4],
                  points: { show: false },
                  value: (_u: uPlot, _v: number | null, _s: number, i: number | null) => {
                    const j = at(i);
                    if (j === null || !data.previous?.points[j]) return '—';
                    return `${formatMetric(metric, previous[j] ?? null)} (${previousLabels[j] ?? ''})`;
                  },
                } satisfies uPlot.Series,
              ]
            : []),
        ],
      };
      const aligned: uPlot.AlignedData = previous
        ? [xs, split.complete, split.partial, previous]
        : [xs, split.complete, split.partial];
      chart = new uPlot(opts, aligned, element);
      const partialRow = chart.root.querySelectorAll<HTMLElement>('.u-legend .u-series')[2];
      if (partialRow) partialRow.style.display = 'none';
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
  }, [data, split, labels, metric, compare, label, notes]);

  const currentLabel = split?.current !== null && split?.current !== undefined ? labels[split.current] : null;
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
      {data && split && currentLabel && !series.error && (
        <p class="hint chart-note" id="chart-partial-note">
          <span class="partial-key" aria-hidden="true" />
          {CURRENT_NAMES[data.interval]} ({currentLabel}) is not over: its figure so far is drawn dashed
          {split.future > 0 ? `, and the ${INTERVAL_NAMES[data.interval]}s still to come are not drawn` : ''}.
        </p>
      )}
      {project.access.can_edit && (
        <AnnotationForm notes={notesQuery.data?.annotations ?? []} onChanged={() => notesQuery.reload()} />
      )}
      {data && split && (
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
                  <td>
                    {split.states[i] === 'future'
                      ? 'not yet'
                      : `${formatMetric(metric, split.values[i])}${split.states[i] === 'current' ? ' so far' : ''}`}
                  </td>
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

/** An editor's form to add a dated note to the project (drawn on the charts), and the notes to remove. */
function AnnotationForm({ notes, onChanged }: { notes: Annotation[]; onChanged(): void }) {
  const { api, project, range } = useTraffic();
  const [error, setError] = useState<string | null>(null);
  const path = `/projects/${encodeURIComponent(project.id)}/annotations`;
  return (
    <details class="annotation-add">
      <summary>{notes.length > 0 ? `Notes (${notes.length})` : 'Add a note'}</summary>
      {notes.length > 0 && (
        <ul class="annotation-list" aria-label="Notes on this project">
          {notes.map((note) => (
            <li key={note.id}>
              <span class="annotation-date">{note.date.slice(0, 10)}</span> {note.text}
              <button
                type="button"
                class="link-button remove-button"
                aria-label={`Remove the note ${note.text}`}
                title="Remove"
                onClick={async () => {
                  try {
                    await api.send('DELETE', `${path}/${encodeURIComponent(note.id)}`);
                    setError(null);
                    onChanged();
                  } catch (err) {
                    setError((err as Error).message);
                  }
                }}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <form
        class="annotation-form"
        onSubmit={async (e) => {
          e.preventDefault();
          const element = e.currentTarget as HTMLFormElement;
          const form = new FormData(element);
          try {
            await api.send<Annotation>('POST', path, {
              date: String(form.get('date') ?? ''),
              text: String(form.get('text') ?? '').trim(),
            });
            setError(null);
            element.reset();
            onChanged();
          } catch (err) {
            setError((err as Error).message);
          }
        }}
      >
        <label>
          Date
          <input type="date" name="date" required defaultValue={range.to} />
        </label>
        <label>
          Note
          <input name="text" required maxLength={500} placeholder="v2 deployed" />
        </label>
        <button type="submit" class="primary">
          Add note
        </button>
        {error && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
      </form>
    </details>
  );
}
