// The revenue view's "MRR over time" card: the end of each month or of each day (a switch), in the view's
// currency, or, when the page is converted (the range bar's "Converted to X", shown once the operator has
// loaded exchange rates), every currency converted with them and added, labelled as converted: the title,
// the chart's caption, the rates used and the currencies left out for want of a rate. The switch is kept in
// the URL with the rest of the view. The daily series covers the range's days up to today, at most the API's
// 366.
import { useMemo } from 'preact/hooks';
import type { Annotation, ConvertedFields, MrrDay, MrrMonth } from '../api/types.ts';
import { useQuery } from '../api/use-query.ts';
import { annotationsPerBucket } from '../query/annotations.ts';
import { ErrorMessage, Loading } from '../ui/messages.tsx';
import { type MrrPoint, MrrSeriesChart } from '../ui/mrr-series-chart.tsx';
import { Tabs } from '../ui/tabs.tsx';
import type { Conversion } from './revenue-common.tsx';
import { lastDay, monthLabel, type RevenueState } from './revenue-state.ts';
import type { ViewProps } from './view-props.ts';

const INTERVAL_TABS = [
  { id: 'month', label: 'Monthly' },
  { id: 'day', label: 'Daily' },
];
const DAY_MS = 86_400_000;

/** The days of a month range the daily chart shows: up to today, the last 366 at most. */
export function dailyRange(state: RevenueState, today: string): { from: string; to: string } {
  const end = lastDay(state.to) < today ? lastDay(state.to) : today;
  const earliest = new Date(Date.parse(`${end}T00:00:00Z`) - 365 * DAY_MS).toISOString().slice(0, 10);
  const start = `${state.from}-01`;
  const from = start > earliest ? start : earliest;
  return { from: from > end ? end : from, to: end };
}

const dayLabel = (date: string) =>
  new Date(`${date}T00:00:00Z`).toLocaleDateString(undefined, {
    month: 'short',
    day: 'numeric',
    timeZone: 'UTC',
  });

const missingOf = (row: object) => (row as Partial<ConvertedFields>).missing_currencies;

type ConvertedDay = Pick<MrrDay, 'date' | 'mrr'> & ConvertedFields;

export function MrrOverTimeCard(props: {
  api: ViewProps['api'];
  base: string;
  state: RevenueState;
  update(patch: Partial<RevenueState>): void;
  today: string;
  /** The months of the range, converted when the page is. */
  months: MrrMonth[];
  conversion: Conversion;
  /** The project's notes, drawn on the chart. */
  notes: Annotation[];
}) {
  const { api, base, state } = props;
  const interval = state.interval;
  const convertTo = props.conversion.to;
  const days = dailyRange(state, props.today);
  const daily = useQuery<Array<MrrDay | ConvertedDay>>(api, interval === 'day' ? `${base}/mrr/daily` : null, {
    ...days,
    ...(convertTo ? { convert_to: convertTo } : { currency: state.currency }),
  });
  const source = interval === 'day' ? daily : null;
  const points: MrrPoint[] | undefined =
    interval === 'day'
      ? daily.data?.map((d) => ({ key: d.date, label: dayLabel(d.date), mrr: d.mrr, without: missingOf(d) }))
      : props.months.map((m) => ({
          key: m.month,
          label: monthLabel(m.month),
          mrr: m.mrr_end,
          without: missingOf(m),
        }));
  const chartNotes = useMemo(
    () =>
      points
        ? annotationsPerBucket(
            points.map((p) => (p.key.length === 7 ? `${p.key}-01` : p.key)),
            interval === 'day' ? days.to : lastDay(state.to),
            props.notes,
            'UTC',
          )
        : undefined,
    [points, props.notes, interval, days.to, state.to],
  );
  const what = convertTo ? `all currencies converted to ${convertTo}` : state.currency;
  const when = interval === 'day' ? 'end of each day (UTC)' : 'end of each month';
  const rows = (interval === 'day' ? (daily.data ?? []) : props.months) as Array<Partial<ConvertedFields>>;
  const missing = [...new Set(rows.flatMap((r) => r.missing_currencies ?? []))].sort();
  const used = new Map<string, string>();
  for (const r of rows)
    for (const rate of r.rates ?? [])
      used.set(`${rate.currency} ${rate.period}`, `${rate.currency} ${rate.rate} (${rate.period})`);

  return (
    <section class="card chart-card" aria-labelledby="mrr-title">
      <div class="card-head">
        <h2 id="mrr-title">
          MRR{' '}
          <span class="muted">
            {what}, {when}
          </span>
        </h2>
        <div class="switches">
          <Tabs
            tabs={INTERVAL_TABS}
            current={interval}
            label="Interval"
            onSelect={(id) => props.update({ interval: id as 'month' | 'day' })}
          />
        </div>
      </div>
      {source?.error ? (
        <ErrorMessage error={source.error} what="MRR over time" onRetry={source.reload} />
      ) : !points ? (
        <Loading />
      ) : (
        <div class={source?.stale ? 'is-stale' : ''}>
          <MrrSeriesChart
            points={points}
            currency={convertTo ?? state.currency}
            caption={`MRR, ${what}, at the ${when}`}
            {...(chartNotes ? { notes: chartNotes } : {})}
          />
          {interval === 'day' ? (
            <p class="hint">
              {days.from} to {days.to}, UTC days
            </p>
          ) : null}
          {convertTo ? (
            <p class="hint converted-note">
              Converted to {convertTo} with the exchange rates loaded by the operator
              {used.size > 0
                ? `: ${[...used.values()].slice(0, 12).join(', ')}${used.size > 12 ? ', …' : ''}`
                : ''}
              .
              {missing.length > 0 ? (
                <strong class="missing-rates">
                  {' '}
                  Left out where no rate is loaded (a gap in the line): {missing.join(', ')}.
                </strong>
              ) : null}
            </p>
          ) : null}
        </div>
      )}
    </section>
  );
}
