// The revenue view's Cohorts card (docs/revenue.md, Cohorts and lifetime value): the range's cohorts as a
// triangle, one row per cohort month and one column per month after it, each cell shaded by its retention
// (a switch: logo, net MRR or gross MRR retention; the cell's title has the customers and MRR behind it),
// and the average retention curve, each offset's mean over the cohorts that reach it, drawn by uPlot as the
// other charts. The figures are GET …/revenue/cohorts's, the same as `tally report cohorts`.
import uPlot from 'uplot';
import type { RevenueCohorts } from '../api/types.ts';
import { useQuery } from '../api/use-query.ts';
import { formatCount, formatPercent } from '../format.ts';
import { formatMoney } from '../money.ts';
import { ErrorMessage, Loading } from '../ui/messages.tsx';
import { cssColor, legendIndex, useChart } from '../ui/revenue-charts.tsx';
import { Tabs } from '../ui/tabs.tsx';
import { type Conversion, currencyWords, MissingRates, moneyParams } from './revenue-common.tsx';
import { monthLabel, type RevenueState } from './revenue-state.ts';
import type { ViewProps } from './view-props.ts';

const RETENTION_TABS = [
  { id: 'logo_retention', label: 'Customers' },
  { id: 'net_mrr_retention', label: 'Net MRR' },
  { id: 'gross_mrr_retention', label: 'Gross MRR' },
] as const;
type Retention = (typeof RETENTION_TABS)[number]['id'];

/** Each offset's mean retention over the cohorts that have a value there (null when none has). */
export function averageCurve(report: RevenueCohorts, which: Retention): Array<number | null> {
  const longest = Math.max(0, ...report.cohorts.map((c) => c.months.length));
  const curve: Array<number | null> = [];
  for (let offset = 0; offset < longest; offset++) {
    const values = report.cohorts
      .map((c) => c.months[offset]?.[which])
      .filter((v): v is number => typeof v === 'number');
    curve.push(values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length);
  }
  return curve;
}

/**
 * A cell's shade, as a share of the chart colour: 10% at 0 to 50% at 100% retention, deeper above 100% (net
 * MRR retention with expansion) up to 65% at 150%.
 */
export function shadeShare(value: number): number {
  const v = Math.max(value, 0);
  return Math.round(v <= 1 ? 10 + 40 * v : 50 + Math.min(v - 1, 0.5) * 30);
}
const shade = (value: number | null | undefined) =>
  value === null || value === undefined
    ? undefined
    : `color-mix(in srgb, var(--chart-current) ${shadeShare(value)}%, transparent)`;

export function CohortsCard(props: {
  api: ViewProps['api'];
  base: string;
  state: RevenueState;
  update(p: Partial<RevenueState>): void;
  conversion: Conversion;
}) {
  const { state, conversion } = props;
  const which: Retention = state.retention;
  const result = useQuery<RevenueCohorts>(props.api, `${props.base}/cohorts`, {
    from: state.from,
    to: state.to,
    ...moneyParams(state, conversion),
    filters: state.filters || undefined,
  });
  const data = result.data;
  const longest = Math.max(0, ...(data?.cohorts ?? []).map((c) => c.months.length));
  return (
    <section class="card cohorts" aria-labelledby="cohorts-title">
      <div class="card-head">
        <h2 id="cohorts-title">
          Cohorts{' '}
          <span class="muted">{currencyWords(state, conversion)}, by the month customers first paid</span>
        </h2>
        <Tabs
          tabs={[...RETENTION_TABS]}
          current={which}
          label="Retention"
          onSelect={(id) => props.update({ retention: id as Retention })}
        />
      </div>
      {result.error ? (
        <ErrorMessage error={result.error} what="The cohorts" onRetry={result.reload} />
      ) : !data ? (
        <Loading />
      ) : data.cohorts.length === 0 ? (
        <p class="empty">No customer first paid in these months.</p>
      ) : (
        <div class={result.stale ? 'panels is-stale' : 'panels'}>
          <div class="table-scroll">
            <table class="plain cohort-table" id="cohort-table">
              <caption class="sr-only">
                {RETENTION_TABS.find((t) => t.id === which)?.label} retention per cohort and month after
              </caption>
              <thead>
                <tr>
                  <th scope="col">Cohort</th>
                  <th scope="col" class="num">
                    Size
                  </th>
                  {Array.from({ length: longest }, (_, k) => (
                    <th scope="col" class="num" key={k}>
                      {k === 0 ? 'Month 0' : `+${k}`}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {data.cohorts.map((c) => (
                  <tr key={c.cohort}>
                    <th scope="row">{monthLabel(c.cohort)}</th>
                    <td class="num">{formatCount(c.size)}</td>
                    {Array.from({ length: longest }, (_, k) => {
                      const m = c.months[k];
                      return m ? (
                        <td
                          key={k}
                          class="num heat"
                          style={{ background: shade(m[which]) }}
                          title={`${monthLabel(m.month)}: ${formatCount(m.customers)} paying, MRR ${formatMoney(m.mrr, data.currency)}`}
                        >
                          {formatPercent(m[which])}
                        </td>
                      ) : (
                        <td key={k} />
                      );
                    })}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <RetentionCurve curve={averageCurve(data, which)} />
        </div>
      )}
      <MissingRates answer={data} />
      <p class="footnote">
        A customer's cohort is the month its MRR first rose above 0. Customers: those still paying at the end
        of each month; net MRR: the cohort's MRR against its first month's (expansion lifts it above 100%);
        gross MRR: the same, no customer counted above its first month's MRR.
      </p>
    </section>
  );
}

function RetentionCurve({ curve }: { curve: Array<number | null> }) {
  const labels = curve.map((_, k) => (k === 0 ? 'Month 0' : `+${k}`));
  const at = (i: number | null) => legendIndex(i, curve.length);
  const caption = 'Average retention by months after the cohort month';
  const container = useChart(
    (element, width) => {
      const grid = cssColor(element, '--grid');
      const text = cssColor(element, '--text-muted');
      const axis = { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
      return new uPlot(
        {
          width,
          height: 240,
          scales: {
            x: { time: false, range: (_u, min, max) => [min - 0.4, max + 0.4] },
            y: { range: (_u, _min, max) => [0, Math.max(1, (max ?? 1) * 1.1)] },
          },
          cursor: { drag: { x: false, y: false } },
          axes: [
            {
              ...axis,
              values: (_u, splits) => splits.map((i) => (Number.isInteger(i) ? (labels[i] ?? '') : '')),
              space: 50,
            },
            { ...axis, size: 50, values: (_u, splits) => splits.map((v) => `${Math.round(v * 100)}%`) },
          ],
          series: [
            { label: 'Months after', value: (_u, _v, _s, i) => labels[at(i) ?? -1] ?? '' },
            {
              label: 'Average retention',
              stroke: cssColor(element, '--chart-current'),
              fill: cssColor(element, '--chart-fill'),
              width: 2,
              points: { show: true },
              value: (_u, _v, _s, i) => formatPercent(curve[at(i) ?? -1] ?? null),
            },
          ],
        },
        [curve.map((_, i) => i), curve],
        element,
      );
    },
    [curve.join(',')],
  );
  return (
    <div class="retention-curve">
      <div ref={container} class="chart" id="retention-curve" role="img" aria-label={caption} />
      <div class="sr-only">
        <table>
          <caption>{caption}</caption>
          <tbody>
            {curve.map((v, k) => (
              <tr key={labels[k]}>
                <th scope="row">{labels[k]}</th>
                <td>{formatPercent(v)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
