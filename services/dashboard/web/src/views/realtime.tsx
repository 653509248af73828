// The realtime view: the visitors now, the pageviews of each of the last 30 minutes as bars (uPlot, as the
// other charts), and the top pages, sources and countries of those minutes, from GET …/traffic/realtime.
// Refreshed every REFRESH_MS without reloading the page, never while the tab is hidden (usePoll); an answer
// that did not change (304 to its ETag) redraws nothing. The interval is what one answer costs on chDB
// (bench/realtime.ts, docs/design/dashboard-service.md, "The realtime view"). A note made within the 30
// minutes (a deploy script's `tally annotations add`) is a marker on its minute, as on the other charts.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { useLocation } from 'preact-iso';
import type { Annotation, Annotations, Realtime, RealtimeRow } from '../api/types.ts';
import { useQuery } from '../api/use-query.ts';
import { formatCount } from '../format.ts';
import { useSignInOn } from '../pages/session.ts';
import { annotationsPerMinute } from '../query/annotations.ts';
import { annotationMarkers } from '../ui/annotation-markers.ts';
import { flagOf, valueLabel } from '../ui/breakdown-columns.ts';
import { ErrorMessage, Loading } from '../ui/messages.tsx';
import { usePoll } from '../ui/use-poll.ts';
import type { ViewProps } from './view-props.ts';

const NO_NOTES: Annotation[] = [];

/** How often the view asks again while shown (ms). */
export const REFRESH_MS = 3000;

/** A minute's label: how long ago it began, "now" for the one running. */
const minuteLabel = (index: number, count: number) => {
  const ago = count - 1 - index;
  return ago === 0 ? 'now' : `−${ago} min`;
};

function cssColor(element: Element, name: string): string {
  return getComputedStyle(element).getPropertyValue(name).trim() || '#888';
}

function MinuteBars({
  points,
  notes,
}: {
  points: Realtime['pageviews_per_minute'];
  /** The project's notes: those made within the 30 minutes are markers on their minute. */
  notes: readonly Annotation[];
}) {
  const container = useRef<HTMLDivElement>(null);
  const chart = useRef<uPlot | null>(null);
  const labels = points.map((_, i) => minuteLabel(i, points.length));
  const data: uPlot.AlignedData = [points.map((_, i) => i), points.map((p) => p.pageviews)];
  const markers = annotationsPerMinute(
    points.map((p) => p.minute),
    notes,
  );
  const latest = useRef({ data, labels, markers });
  latest.current = { data, labels, markers };

  // Built once (and again when the colour scheme changes); later answers only replace the data.
  useEffect(() => {
    const element = container.current;
    if (!element) return;
    const build = () => {
      chart.current?.destroy();
      const grid = cssColor(element, '--grid');
      const text = cssColor(element, '--text-muted');
      const axis = { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
      const width = Math.max(element.clientWidth, 280);
      const at = (i: number | null | undefined) =>
        i === null || i === undefined ? latest.current.labels.length - 1 : i;
      chart.current = new uPlot(
        {
          width,
          height: width < 600 ? 180 : 220,
          scales: {
            x: { time: false, range: (_u, min, max) => [min - 0.5, max + 0.5] },
            y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
          },
          cursor: { drag: { x: false, y: false } },
          plugins: [annotationMarkers(() => latest.current.markers)],
          axes: [
            {
              ...axis,
              space: 56,
              values: (_u, splits) =>
                splits.map((i) => (Number.isInteger(i) ? (latest.current.labels[i] ?? '') : '')),
            },
            {
              ...axis,
              size: 48,
              incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5],
              values: (_u, splits) => splits.map((v) => formatCount(v)),
            },
          ],
          series: [
            { label: 'Minute', value: (_u, _v, _s, i) => latest.current.labels[at(i)] ?? '' },
            {
              label: 'Pageviews',
              stroke: cssColor(element, '--chart-current'),
              fill: cssColor(element, '--chart-current'),
              width: 0,
              paths: uPlot.paths.bars?.({ size: [0.7, 40] }),
              points: { show: false },
              value: (_u, _v, _s, i) => formatCount(Number(latest.current.data[1]?.[at(i)] ?? 0)),
            },
          ],
        },
        latest.current.data,
        element,
      );
    };
    build();
    let width = element.clientWidth;
    const resize = new ResizeObserver(() => {
      if (chart.current && element.clientWidth !== width) {
        width = element.clientWidth;
        chart.current.setSize({ width: Math.max(width, 280), height: width < 600 ? 180 : 220 });
      }
    });
    resize.observe(element);
    const scheme = matchMedia('(prefers-color-scheme: dark)');
    scheme.addEventListener('change', build);
    return () => {
      resize.disconnect();
      scheme.removeEventListener('change', build);
      chart.current?.destroy();
      chart.current = null;
    };
  }, []);

  useEffect(() => {
    chart.current?.setData(data);
  }, [points, notes]);

  return (
    <>
      <div ref={container} class="chart" role="img" aria-label="Pageviews per minute, last 30 minutes" />
      <div class="sr-only">
        <table>
          <caption>Pageviews per minute, last 30 minutes</caption>
          <thead>
            <tr>
              <th scope="col">Minute (UTC)</th>
              <th scope="col">Pageviews</th>
            </tr>
          </thead>
          <tbody>
            {points.map((p) => (
              <tr key={p.minute}>
                <th scope="row">{p.minute.slice(11, 16)}</th>
                <td>{formatCount(p.pageviews)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

function TopList(props: {
  id: string;
  title: string;
  column: string;
  dimension: string;
  rows: RealtimeRow[];
}) {
  const max = Math.max(1, ...props.rows.map((r) => r.visitors));
  return (
    <section class="card panel" aria-labelledby={`${props.id}-title`}>
      <div class="card-head">
        <h2 id={`${props.id}-title`}>
          {props.title} <span class="muted">last 30 minutes</span>
        </h2>
      </div>
      {props.rows.length === 0 ? (
        <p class="empty">None in the last 30 minutes.</p>
      ) : (
        <table class="bars" id={props.id}>
          <caption class="sr-only">{props.title}, last 30 minutes</caption>
          <thead>
            <tr>
              <th scope="col" class="value-col">
                {props.column}
              </th>
              <th scope="col" class="num">
                Visitors
              </th>
            </tr>
          </thead>
          <tbody>
            {props.rows.map((row) => {
              const flag = props.dimension === 'country' ? flagOf(row.value) : '';
              return (
                <tr key={row.value} data-value={row.value}>
                  <td class="value-col">
                    <span
                      class="bar"
                      style={{ width: `${(row.visitors / max) * 100}%` }}
                      aria-hidden="true"
                    />
                    <span class="value-text">
                      {flag && (
                        <span class="flag" aria-hidden="true">
                          {flag}{' '}
                        </span>
                      )}
                      {valueLabel(props.dimension, row.value)}
                    </span>
                  </td>
                  <td class="num">{formatCount(row.visitors)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}

export function RealtimeView({ api, project }: ViewProps) {
  const { route } = useLocation();
  const live = usePoll<Realtime>(
    api,
    `/projects/${encodeURIComponent(project.id)}/traffic/realtime`,
    {},
    REFRESH_MS,
  );
  useSignInOn(api.kind === 'session' ? live.error : undefined, route);
  // Notes are read once with the view: a note added meanwhile shows at the next visit.
  const notes = useQuery<Annotations>(api, `/projects/${encodeURIComponent(project.id)}/annotations`);
  if (!live.data) {
    return live.error ? <ErrorMessage error={live.error} what="The realtime view" /> : <Loading />;
  }
  const data = live.data;
  const pageviews = data.pageviews_per_minute.reduce((sum, p) => sum + p.pageviews, 0);
  const checked = live.checkedAt ? new Date(live.checkedAt).toLocaleTimeString() : '';
  return (
    <>
      {live.error && <ErrorMessage error={live.error} what="The latest refresh" />}
      <section class="top-figures" aria-label="Now">
        <ul class="figures">
          <li>
            <div class="figure current">
              <span class="figure-label">
                <span class="live-dot" aria-hidden="true" /> Visitors now
              </span>
              <span class="figure-value" id="realtime-visitors">
                {formatCount(data.visitors)}
              </span>
              <span class="change neutral">last 5 minutes</span>
            </div>
          </li>
          <li>
            <div class="figure">
              <span class="figure-label">Pageviews</span>
              <span class="figure-value" id="realtime-pageviews">
                {formatCount(pageviews)}
              </span>
              <span class="change neutral">last 30 minutes</span>
            </div>
          </li>
        </ul>
        <p class="caveat" id="realtime-refresh">
          Refreshed every {REFRESH_MS / 1000} seconds while this tab is shown
          {checked ? ` (last checked ${checked})` : ''}.
        </p>
      </section>
      <section class="card chart-card" aria-labelledby="realtime-chart-title">
        <div class="card-head">
          <h2 id="realtime-chart-title">
            Pageviews <span class="muted">per minute, last 30 minutes</span>
          </h2>
        </div>
        <MinuteBars points={data.pageviews_per_minute} notes={notes.data?.annotations ?? NO_NOTES} />
      </section>
      <div class="panels three">
        <TopList id="realtime-pages" title="Top pages" column="Page" dimension="page" rows={data.pages} />
        <TopList
          id="realtime-sources"
          title="Sources"
          column="Source"
          dimension="source"
          rows={data.sources}
        />
        <TopList
          id="realtime-countries"
          title="Countries"
          column="Country"
          dimension="country"
          rows={data.countries}
        />
      </div>
    </>
  );
}
