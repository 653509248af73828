// MRR over time as one uPlot line, for any series of points: the end of each month, or the end of each day
// (the daily/monthly switch of the revenue view), in one currency or converted. Axis labels are thinned by
// uPlot's own spacing; the hidden table gives screen readers every point's exact figure. A converted point
// that left a currency out for want of a rate is a gap in the line, not a drop: its sum is incomplete. Away
// from the chart, the legend shows the last point.
import uPlot from 'uplot';
import { formatMoney } from '../money.ts';
import { moneyNumber } from '../views/revenue-state.ts';
import { annotationMarkers } from './annotation-markers.ts';
import { axes, cssColor, legendIndex, NO_NOTES, useChart } from './revenue-charts.tsx';

export interface MrrPoint {
  /** YYYY-MM or YYYY-MM-DD */
  key: string;
  label: string;
  mrr: string;
  /** Currencies left out of a converted figure (no rate): the chart leaves a gap, the table says so. */
  without?: string[];
}

export function MrrSeriesChart(props: {
  points: MrrPoint[];
  caption: string;
  currency: string;
  /** The project's notes per point (query/annotations.ts), drawn as markers. */
  notes?: Map<number, string[]>;
}) {
  const { points, caption, currency } = props;
  const notes = props.notes ?? NO_NOTES;
  const labels = points.map((p) => p.label);
  const at = (i: number | null) => legendIndex(i, points.length);
  const container = useChart(
    (element, width) =>
      new uPlot(
        {
          width,
          height: 240,
          scales: {
            x: { time: false, range: (_u, min, max) => [min - 0.4, max + 0.4] },
            y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
          },
          cursor: { drag: { x: false, y: false } },
          axes: axes(element, labels, currency),
          plugins: [annotationMarkers(notes)],
          series: [
            {
              label: points[0]?.key.length === 10 ? 'Day' : 'Month',
              value: (_u, _v, _s, i) => labels[at(i) ?? -1] ?? '',
            },
            {
              label: 'MRR at the end',
              stroke: cssColor(element, '--chart-current'),
              fill: cssColor(element, '--chart-fill'),
              width: 2,
              points: { show: points.length <= 40 },
              value: (_u, _v, _s, i) => {
                const point = points[at(i) ?? -1];
                const without = point?.without?.length ? ` (without ${point.without.join(', ')})` : '';
                return `${formatMoney(point?.mrr, currency)}${without}`;
              },
            },
          ],
        },
        [points.map((_, i) => i), points.map((p) => (p.without?.length ? null : moneyNumber(p.mrr)))],
        element,
      ),
    [points, currency, notes],
  );
  return (
    <>
      <div ref={container} class="chart" role="img" aria-label={caption} />
      <div class="sr-only">
        <table>
          <caption>{caption}</caption>
          <tbody>
            {points.map((p) => (
              <tr key={p.key}>
                <th scope="row">{p.key}</th>
                <td>
                  {formatMoney(p.mrr, currency)}
                  {p.without?.length ? ` (without ${p.without.join(', ')})` : ''}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
