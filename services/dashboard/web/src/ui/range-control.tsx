// The range of the view: a preset (today, 7/30/90 days, month to date, last month) or custom days, the
// interval of the time series and the comparison period. Days are the project's, in its time zone.
import { useState } from 'preact/hooks';
import type { Compare, Interval } from '../api/types.ts';
import { type DayRange, formatRange, intervalsFor, isDay, PERIODS, type Period } from '../query/range.ts';
import type { ViewState } from '../query/view-state.ts';

const INTERVAL_LABELS: Record<Interval, string> = {
  hour: 'Hours',
  day: 'Days',
  week: 'Weeks',
  month: 'Months',
};
const COMPARE_LABELS: Record<Compare, string> = {
  previous: 'Previous period',
  year: 'Year before',
  none: 'No comparison',
};

export function RangeControl(props: {
  state: ViewState;
  range: DayRange;
  interval: Interval;
  today: string;
  timeZone: string;
  onChange(patch: Partial<ViewState>): void;
}) {
  const { state, range } = props;
  const [custom, setCustom] = useState<DayRange>(range);
  const choosePeriod = (period: Period) => {
    if (period === 'custom') {
      setCustom(range);
      props.onChange({ period, custom: { from: range.from, to: range.to }, interval: undefined });
    } else props.onChange({ period, custom: {}, interval: undefined });
  };
  return (
    <div class="range-control">
      <div class="field">
        <label class="field-label" for="range-period">
          Range
        </label>
        <select
          id="range-period"
          value={state.period}
          onChange={(e) => choosePeriod((e.currentTarget as HTMLSelectElement).value as Period)}
        >
          {PERIODS.map((p) => (
            <option key={p.id} value={p.id}>
              {p.label}
            </option>
          ))}
        </select>
      </div>
      {state.period === 'custom' && (
        <form
          class="custom-range"
          onSubmit={(e) => {
            e.preventDefault();
            if (isDay(custom.from) && isDay(custom.to))
              props.onChange({ custom: { from: custom.from, to: custom.to }, interval: undefined });
          }}
        >
          <div class="field">
            <label class="field-label" for="range-from">
              From
            </label>
            <input
              id="range-from"
              type="date"
              name="from"
              value={custom.from}
              max={props.today}
              required
              onInput={(e) => setCustom({ ...custom, from: (e.currentTarget as HTMLInputElement).value })}
            />
          </div>
          <div class="field">
            <label class="field-label" for="range-to">
              To
            </label>
            <input
              id="range-to"
              type="date"
              name="to"
              value={custom.to}
              max={props.today}
              required
              onInput={(e) => setCustom({ ...custom, to: (e.currentTarget as HTMLInputElement).value })}
            />
          </div>
          <button type="submit">Apply</button>
        </form>
      )}
      <div class="field">
        <label class="field-label" for="range-interval">
          By
        </label>
        <select
          id="range-interval"
          value={props.interval}
          onChange={(e) =>
            props.onChange({ interval: (e.currentTarget as HTMLSelectElement).value as Interval })
          }
        >
          {intervalsFor(range).map((i) => (
            <option key={i} value={i}>
              {INTERVAL_LABELS[i]}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label class="field-label" for="range-compare">
          Compare with
        </label>
        <select
          id="range-compare"
          value={state.compare}
          onChange={(e) =>
            props.onChange({ compare: (e.currentTarget as HTMLSelectElement).value as Compare })
          }
        >
          {(Object.keys(COMPARE_LABELS) as Compare[]).map((c) => (
            <option key={c} value={c}>
              {COMPARE_LABELS[c]}
            </option>
          ))}
        </select>
      </div>
      <p class="range-label" id="range-label">
        {formatRange(range)} <span class="muted">· {props.timeZone}</span>
      </p>
    </div>
  );
}
