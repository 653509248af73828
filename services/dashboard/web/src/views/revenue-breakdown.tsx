// The revenue view's customer attributes: the filters in force as removable chips (the traffic views'
// syntax, `metadata.<key>` for any metadata key, kept in the URL), the breakdown by plan, interval, coupon,
// source, campaign, payment processor or a metadata key (clicking a row filters every revenue panel by
// it), and the metadata search that lists the revenue records with a key and value, as
// `tally revenue search` does.
import { useState } from 'preact/hooks';
import type { Api } from '../api/client.ts';
import type { RevenueBreakdown, RevenueSearch } from '../api/types.ts';
import { useQuery } from '../api/use-query.ts';
import { formatCount } from '../format.ts';
import { formatMoney } from '../money.ts';
import { type Filter, operatorLabel, parseFilters, serializeFilters, withFilter } from '../query/filters.ts';
import { GroupFiguresTable } from '../ui/group-figures-table.tsx';
import { ErrorMessage, Loading } from '../ui/messages.tsx';
import { Tabs } from '../ui/tabs.tsx';
import {
  type Conversion,
  currencyWords,
  type DrillRequest,
  MissingRates,
  moneyParams,
} from './revenue-common.tsx';
import { formatTime, monthLabel, type RevenueState } from './revenue-state.ts';

const KEYED = 'metadata.';
export const REVENUE_DIMENSIONS = [
  { id: 'plan', label: 'Plan' },
  { id: 'interval', label: 'Interval' },
  { id: 'coupon', label: 'Coupon' },
  { id: 'source', label: 'Source' },
  { id: 'campaign', label: 'Campaign' },
  { id: 'payment_processor', label: 'Payment processor' },
];

export const revenueDimensionLabel = (dimension: string) =>
  dimension.startsWith(KEYED)
    ? `Metadata ${dimension.slice(KEYED.length)}`
    : (REVENUE_DIMENSIONS.find((d) => d.id === dimension)?.label ?? dimension);

export const revenueFilters = (text: string): Filter[] => parseFilters(text, KEYED);
const filtersText = (filters: Filter[]) => serializeFilters(filters, KEYED);

/** The filters in force; each chip removes its filter. Nothing when there are none. */
export function RevenueFilterChips(props: {
  state: RevenueState;
  update(p: Partial<RevenueState>): void;
  customersPath: string;
}) {
  const filters = revenueFilters(props.state.filters);
  if (filters.length === 0) return null;
  return (
    <section class="filter-bar revenue-filters" aria-label="Revenue filters">
      <ul class="chips" aria-label="Filters in force">
        {filters.map((f, i) => {
          const text = `${revenueDimensionLabel(f.dimension)} ${operatorLabel(f.operator)} ${f.values.join(' or ')}`;
          return (
            <li key={`${f.dimension}${f.operator}${f.values.join('|')}`} class="chip">
              <span>{text}</span>
              <button
                type="button"
                aria-label={`Remove filter: ${text}`}
                onClick={() => props.update({ filters: filtersText(filters.filter((_, j) => j !== i)) })}
              >
                ×
              </button>
            </li>
          );
        })}
      </ul>
      {filters.length > 1 && (
        <button type="button" class="link-button" onClick={() => props.update({ filters: '' })}>
          Clear all
        </button>
      )}
      <p class="hint">
        Figures, attribution, breakdown and drill-downs show only the customers whose value at the end of the
        range matches (
        <a href={`${props.customersPath}?${new URLSearchParams({ filters: props.state.filters })}`}>
          their list
        </a>
        ); the funnel and the reconciliation show every customer.
      </p>
    </section>
  );
}

/** Revenue by a customer attribute; its rows add up to the total, which is the MRR report's. */
export function BreakdownCard(props: {
  api: Api;
  base: string;
  state: RevenueState;
  update(p: Partial<RevenueState>): void;
  drill(request: DrillRequest): void;
  conversion: Conversion;
}) {
  const { state, conversion } = props;
  const result = useQuery<RevenueBreakdown>(props.api, `${props.base}/breakdown`, {
    from: state.from,
    to: state.to,
    ...moneyParams(state, conversion),
    by: state.breakdown,
    filters: state.filters || undefined,
  });
  const [key, setKey] = useState(
    state.breakdown.startsWith(KEYED) ? state.breakdown.slice(KEYED.length) : '',
  );
  const data = result.data;
  const filters = revenueFilters(state.filters);
  const filterBy = (value: string) => filtersText(withFilter(filters, state.breakdown, value));
  const label = revenueDimensionLabel(state.breakdown);
  return (
    <section class="card attribution" aria-labelledby="breakdown-title">
      <div class="card-head">
        <h2 id="breakdown-title">
          Revenue by {label.toLowerCase()}{' '}
          <span class="muted">
            {currencyWords(state, conversion)}, {monthLabel(state.from)} – {monthLabel(state.to)}
          </span>
        </h2>
      </div>
      <div class="switches">
        <Tabs
          tabs={REVENUE_DIMENSIONS}
          current={state.breakdown}
          label="Break down by"
          onSelect={(breakdown) => props.update({ breakdown })}
        />
        <form
          class="field inline"
          onSubmit={(e) => {
            e.preventDefault();
            if (key.trim() !== '') props.update({ breakdown: `${KEYED}${key.trim()}` });
          }}
        >
          <label class="field-label" for="breakdown-key">
            Metadata key
          </label>
          <input
            id="breakdown-key"
            list="breakdown-keys"
            size={12}
            maxLength={200}
            value={key}
            onInput={(e) => setKey((e.currentTarget as HTMLInputElement).value)}
          />
          <datalist id="breakdown-keys">
            {(data?.metadata_keys ?? []).map((k) => (
              <option key={k} value={k} />
            ))}
          </datalist>
          <button type="submit">Break down</button>
        </form>
      </div>
      {result.error ? (
        <ErrorMessage
          error={result.error}
          what={`Revenue by ${label.toLowerCase()}`}
          onRetry={result.reload}
        />
      ) : !data ? (
        <Loading />
      ) : data.rows.length === 0 ? (
        <p class="empty">
          No customer has {conversion.to ? '' : `${state.currency} `}revenue up to the end of these months.
        </p>
      ) : (
        <GroupFiguresTable
          id="breakdown-table"
          heading={label}
          rows={data.rows}
          total={data.total}
          currency={data.currency}
          stale={result.stale}
          {...(conversion.to
            ? {}
            : {
                open: (column, row) => {
                  const within = row ? filterBy(row.key) : filtersText(filters);
                  props.drill({
                    figure: column,
                    from: state.from,
                    to: state.to,
                    ...(within ? { filters: within } : {}),
                  });
                },
              })}
          rowHeader={(row) => (
            <button
              type="button"
              class="cell-link"
              title="Show only these customers"
              aria-label={`Filter by ${label} ${row.key}`}
              onClick={() => props.update({ filters: filterBy(row.key) })}
            >
              {row.key}
            </button>
          )}
        />
      )}
      <MissingRates answer={data} />
      <p class="footnote">
        A customer's {label.toLowerCase()} is the value on its latest revenue record up to the end of the
        range that has one; (none) when no record has. Rows add up exactly to the total, which is the MRR
        report's. Click a value to show only its customers on every revenue panel.
      </p>
    </section>
  );
}

/** The revenue records whose metadata has a key with a value (`tally revenue search`). */
export function MetadataSearchCard(props: {
  api: Api;
  base: string;
  customerHref(customer: string): string;
}) {
  const [key, setKey] = useState('');
  const [value, setValue] = useState('');
  const [asked, setAsked] = useState<{ key: string; value: string } | null>(null);
  const result = useQuery<RevenueSearch>(
    props.api,
    asked ? `${props.base}/search` : null,
    asked ?? undefined,
  );
  const records = result.data && !result.stale ? result.data.records : undefined;
  const text = (v: unknown) => (v === undefined || v === null ? '—' : String(v));
  // The payload's amount is a JSON number: shown as money when it reads as plain decimal text.
  const money = (v: unknown, currency: string) =>
    /^-?\d+(\.\d+)?$/.test(text(v)) ? formatMoney(text(v), currency) : `${text(v)} ${currency}`;
  return (
    <section class="card" aria-labelledby="metadata-search-title">
      <div class="card-head">
        <h2 id="metadata-search-title">Search revenue records by metadata</h2>
      </div>
      <form
        class="property-form"
        aria-label="Metadata search"
        onSubmit={(e) => {
          e.preventDefault();
          if (key.trim() !== '') setAsked({ key: key.trim(), value });
        }}
      >
        <label class="field inline">
          <span class="field-label">Key</span>
          <input
            id="search-key"
            size={12}
            maxLength={200}
            value={key}
            onInput={(e) => setKey((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <label class="field inline">
          <span class="field-label">Value</span>
          <input
            id="search-value"
            size={16}
            maxLength={1000}
            value={value}
            onInput={(e) => setValue((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <button type="submit">Search</button>
      </form>
      {!asked ? null : result.error ? (
        <ErrorMessage error={result.error} what="The records" onRetry={result.reload} />
      ) : !records ? (
        <Loading />
      ) : records.length === 0 ? (
        <p class="empty" id="search-empty">
          No revenue record has {asked.key} = {asked.value}.
        </p>
      ) : (
        <div class="table-scroll">
          <p class="hint" id="search-count">
            {formatCount(records.length)} {records.length === 1 ? 'record' : 'records'}, oldest first
            {records.length >= 100 ? ' (the first 100)' : ''}
          </p>
          <table class="plain figures-table" id="search-table">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Customer</th>
                <th scope="col">Transaction</th>
                <th scope="col">Kind</th>
                <th scope="col" class="num">
                  Amount
                </th>
                <th scope="col">Metadata</th>
              </tr>
            </thead>
            <tbody>
              {records.map((r) => {
                const customer = text(r.data.customer_id);
                const metadata = (r.data.metadata ?? {}) as Record<string, unknown>;
                return (
                  <tr key={r.id}>
                    <td>{formatTime(r.timestamp)}</td>
                    <td>
                      <a href={props.customerHref(customer)}>{customer}</a>
                    </td>
                    <td class="mono">{r.transaction_id}</td>
                    <td>{text(r.data.event_type)}</td>
                    <td class="num">{money(r.data.amount, text(r.data.currency ?? 'USD'))}</td>
                    <td class="mono">
                      {Object.entries(metadata)
                        .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
                        .join(', ')}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
