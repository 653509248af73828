// The revenue charts, drawn by uPlot as the traffic view's time series: each month's movements as bars,
// new business, expansion and reactivation above zero and contraction and churn below, with net new MRR as
// a line. The bars are stacked by drawing the running sums back to front; the legend shows each movement's
// own amount; away from the chart it shows the last month's (never a row of "—"). A hidden table gives
// screen readers the same numbers. The helpers here (useChart, axes, cssColor) also draw MRR over time
// (mrr-series-chart.tsx).
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { annotationMarkers } from './annotation-markers.ts';
import 'uplot/dist/uPlot.min.css';
import type { MrrMonth } from '../api/types.ts';
import { formatMoney, formatMoneyAxis } from '../money.ts';
import { moneyNumber, monthLabel } from '../views/revenue-state.ts';

const MOVEMENTS = [
  { key: 'reactivation', label: 'Reactivation', color: '#0ea5e9', sign: 1 },
  { key: 'expansion', label: 'Expansion', color: '#14b8a6', sign: 1 },
  { key: 'new', label: 'New business', color: '#22a355', sign: 1 },
  { key: 'churn', label: 'Churn', color: '#dc2626', sign: -1 },
  { key: 'contraction', label: 'Contraction', color: '#f59e0b', sign: -1 },
] as const;

export function cssColor(element: Element, name: string): string {
  return getComputedStyle(element).getPropertyValue(name).trim() || '#888';
}

/**
 * The point a legend shows: the hovered one, or the last one when the cursor is away (uPlot asks with
 * `null` then).
 */
export const legendIndex = (i: number | null | undefined, count: number): number | null =>
  i === null || i === undefined ? (count > 0 ? count - 1 : null) : i;

export function useChart(build: (element: HTMLDivElement, width: number) => uPlot | null, deps: unknown[]) {
  const container = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = container.current;
    if (!element) return;
    let chart: uPlot | null = null;
    const draw = () => {
      chart?.destroy();
      chart = build(element, Math.max(element.clientWidth, 280));
    };
    draw();
    let width = element.clientWidth;
    const resize = new ResizeObserver(() => {
      if (chart && element.clientWidth !== width) {
        width = element.clientWidth;
        chart.setSize({ width: Math.max(width, 280), height: 240 });
      }
    });
    resize.observe(element);
    const scheme = matchMedia('(prefers-color-scheme: dark)');
    scheme.addEventListener('change', draw);
    return () => {
      resize.disconnect();
      scheme.removeEventListener('change', draw);
      chart?.destroy();
    };
  }, deps);
  return container;
}

export function axes(element: Element, labels: string[], currency: string): uPlot.Axis[] {
  const grid = cssColor(element, '--grid');
  const text = cssColor(element, '--text-muted');
  const axis = { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
  return [
    {
      ...axis,
      values: (_u, splits) => splits.map((i) => (Number.isInteger(i) ? (labels[i] ?? '') : '')),
      space: 50,
    },
    { ...axis, size: 60, values: (_u, splits) => splits.map((v) => formatMoneyAxis(v, currency)) },
  ];
}

/** No notes to draw on a chart. */
export const NO_NOTES: Map<number, string[]> = new Map();

export function MovementsChart({
  months,
  currency,
  notes = NO_NOTES,
}: {
  months: MrrMonth[];
  currency: string;
  /** The project's notes per month (query/annotations.ts), drawn as markers. */
  notes?: Map<number, string[]>;
}) {
  const labels = months.map((m) => monthLabel(m.month));
  const at = (i: number | null) => legendIndex(i, months.length);
  const container = useChart(
    (element, width) => {
      const xs = months.map((_, i) => i);
      const own = (m: MrrMonth, key: (typeof MOVEMENTS)[number]['key']) => moneyNumber(m[key]);
      // Running sums, drawn back to front so that each bar shows its own segment.
      const stacked = MOVEMENTS.map((movement, index) =>
        months.map((m) => {
          let sum = 0;
          for (const other of MOVEMENTS.slice(index))
            if (other.sign === movement.sign) sum += own(m, other.key);
          return movement.sign * sum;
        }),
      );
      const bars = uPlot.paths.bars?.({ size: [0.6, 48] });
      const net = months.map((m) => moneyNumber(m.net_new));
      return new uPlot(
        {
          width,
          height: 240,
          scales: { x: { time: false, range: (_u, min, max) => [min - 0.5, max + 0.5] } },
          cursor: { drag: { x: false, y: false } },
          axes: axes(element, labels, currency),
          plugins: [annotationMarkers(notes)],
          series: [
            { label: 'Month', value: (_u, _v, _s, i) => labels[at(i) ?? -1] ?? '' },
            ...MOVEMENTS.map(
              (movement) =>
                ({
                  label: movement.label,
                  stroke: movement.color,
                  fill: movement.color,
                  width: 0,
                  paths: bars,
                  points: { show: false },
                  value: (_u: uPlot, _v: number | null, _s: number, i: number | null) =>
                    formatMoney(months[at(i) ?? -1]?.[movement.key], currency),
                }) satisfies uPlot.Series,
            ),
            {
              label: 'Net new',
              stroke: cssColor(element, '--text'),
              width: 2,
              value: (_u, _v, _s, i) => formatMoney(months[at(i) ?? -1]?.net_new, currency),
            },
          ],
        },
        [xs, ...stacked, net],
        element,
      );
    },
    [months, currency, notes],
  );
  return (
    <>
      <div
        ref={container}
        class="chart"
        role="img"
        aria-label="MRR movements of each month: new business, expansion and reactivation above zero, contraction and churn below, and net new MRR"
      />
      <div class="sr-only">
        <table>
          <caption>MRR movements per month</caption>
          <thead>
            <tr>
              <th scope="col">Month</th>
              {MOVEMENTS.map((m) => (
                <th key={m.key} scope="col">
                  {m.label}
                </th>
              ))}
              <th scope="col">Net new</th>
            </tr>
          </thead>
          <tbody>
            {months.map((m) => (
              <tr key={m.month}>
                <th scope="row">{m.month}</th>
                {MOVEMENTS.map((movement) => (
                  <td key={movement.key}>{formatMoney(m[movement.key], currency)}</td>
                ))}
                <td>{formatMoney(m.net_new, currency)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
