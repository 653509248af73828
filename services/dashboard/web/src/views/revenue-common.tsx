// The revenue views' hooks and shared parts: the page state kept in the URL, and the drill-down dialog that
// opens any figure into the records, movements or customers that make it up (they add up to it). The
// drill-down shows every amount exactly, as the API sends it, so that its items visibly add up to its total.
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import type { Api, Params } from '../api/client.ts';
import type { Drilldown } from '../api/types.ts';
import { useQuery } from '../api/use-query.ts';
import { formatMoneyExact } from '../money.ts';
import { Dialog } from '../ui/dialog.tsx';
import { ErrorMessage, Loading } from '../ui/messages.tsx';
import {
  FIGURE_NAMES,
  monthLabel,
  type RevenueState,
  readRevenueState,
  revenueSearch,
} from './revenue-state.ts';

/** The state of the page and a way to change it (kept in the URL, so every view can be shared). */
export function useRevenueState(path: string, today: string) {
  const { query, route } = useLocation();
  const state = readRevenueState(query, today);
  const update = (patch: Partial<RevenueState>) =>
    route(`${path}${revenueSearch({ ...state, ...patch }, today)}`);
  return { state, update };
}

/**
 * The page's conversion: with rates loaded by the operator and "Converted to X" on, every card, chart and
 * table that can be converted shows every currency converted to X and added up (the API's convert_to);
 * else the picked currency alone. `target` is the currency the switch offers (EUR when rates to it exist).
 */
export interface Conversion {
  to: string | undefined;
  target: string | undefined;
}

/** A money report's query parameters: convert_to when converting, else the picked currency. */
export const moneyParams = (state: RevenueState, conversion: Conversion): Params =>
  conversion.to ? { convert_to: conversion.to } : { currency: state.currency };

/** What a card's title says of its money: the picked currency, or "converted to X". */
export const currencyWords = (state: RevenueState, conversion: Conversion): string =>
  conversion.to ? `all currencies converted to ${conversion.to}` : state.currency;

/** A converted answer's note: the currencies it left out for want of a rate, when any. */
export function MissingRates(props: { answer: { missing_currencies?: string[] } | null | undefined }) {
  const missing = props.answer?.missing_currencies ?? [];
  if (missing.length === 0) return null;
  return (
    <p class="hint missing-rates" role="note">
      Left out where no exchange rate is loaded: {missing.join(', ')}.
    </p>
  );
}

export interface DrillRequest {
  figure: string;
  from: string;
  to: string;
  group?: { by: string; touch: string; key: string };
  /** Revenue filters (API syntax) the items are limited to. */
  filters?: string;
}

/** Items of a drill-down listed at first, and added by each "Show more". */
export const DRILL_PAGE = 200;

/** The dialog listing what makes up a figure; its items add up to the figure shown on the page. */
export function DrilldownDialog(props: {
  api: Api;
  project: string;
  currency: string;
  request: DrillRequest | null;
  customerHref(customer: string): string;
  onClose(): void;
}) {
  const r = props.request;
  // A figure can be made of tens of thousands of items: the first DRILL_PAGE, then more on demand (the
  // count and the total are always the whole figure's).
  const [shown, setShown] = useState(DRILL_PAGE);
  useEffect(() => setShown(DRILL_PAGE), [r]);
  const params: Params | undefined = r
    ? {
        figure: r.figure,
        from: r.from,
        to: r.to,
        currency: props.currency,
        ...(r.group ? { by: r.group.by, touch: r.group.touch, key: r.group.key } : {}),
        ...(r.filters ? { filters: r.filters } : {}),
        limit: String(shown),
      }
    : undefined;
  const drill = useQuery<Drilldown>(
    props.api,
    r ? `/projects/${encodeURIComponent(props.project)}/revenue/records` : null,
    params,
  );
  const title = r
    ? `${FIGURE_NAMES[r.figure] ?? r.figure}${r.group ? ` · ${r.group.key}` : ''}, ${r.from === r.to ? monthLabel(r.from) : `${monthLabel(r.from)} – ${monthLabel(r.to)}`}`
    : '';
  // While more items load, the ones listed stay.
  const data = drill.data && (!drill.stale || shown > DRILL_PAGE) ? drill.data : undefined;
  const loadingMore = drill.stale && data !== undefined;
  const counted = r?.figure === 'paying_customers';
  return (
    <Dialog open={r !== null} title={title} wide onClose={props.onClose}>
      {drill.error ? (
        <ErrorMessage error={drill.error} what="The items" onRetry={drill.reload} />
      ) : !data ? (
        <Loading />
      ) : (
        <div class="dialog-scroll">
          <p class="drill-total" id="drill-total">
            {data.count} {data.count === 1 ? 'item' : 'items'}
            {counted ? '' : `, adding up to ${formatMoneyExact(data.total, data.currency)}`}
          </p>
          {data.items.length === 0 ? (
            <p class="empty">Nothing makes up this figure.</p>
          ) : (
            <table class="plain drill-table">
              <thead>
                <tr>
                  <th scope="col">Date</th>
                  <th scope="col">Customer</th>
                  <th scope="col">Record</th>
                  <th scope="col">Kind</th>
                  <th scope="col" class="num">
                    Amount
                  </th>
                </tr>
              </thead>
              <tbody>
                {data.items.map((item, i) => (
                  <tr key={`${item.customer_id}-${item.transaction_id ?? i}`}>
                    <td>{item.timestamp ? item.timestamp.slice(0, 10) : '—'}</td>
                    <td>
                      <a href={props.customerHref(item.customer_id)}>{item.customer_id}</a>
                    </td>
                    <td class="mono">{item.transaction_id ?? '—'}</td>
                    <td>{item.movement ?? item.event_type ?? (counted ? 'paying' : 'MRR')}</td>
                    <td class="num">{formatMoneyExact(item.amount, data.currency)}</td>
                  </tr>
                ))}
              </tbody>
              {data.items.length < data.count && (
                <tfoot>
                  <tr>
                    <td colSpan={5} class="drill-more">
                      {data.items.length.toLocaleString('en-US')} of {data.count.toLocaleString('en-US')}{' '}
                      listed{' '}
                      <button
                        type="button"
                        class="link-button"
                        id="drill-more"
                        disabled={loadingMore}
                        onClick={() => setShown(shown + DRILL_PAGE)}
                      >
                        {loadingMore
                          ? 'Loading…'
                          : `Show ${Math.min(DRILL_PAGE, data.count - data.items.length)} more`}
                      </button>
                    </td>
                  </tr>
                </tfoot>
              )}
              {!counted && (
                <tfoot>
                  <tr>
                    <th scope="row" colSpan={4}>
                      Total
                    </th>
                    <td class="num">{formatMoneyExact(data.total, data.currency)}</td>
                  </tr>
                </tfoot>
              )}
            </table>
          )}
        </div>
      )}
    </Dialog>
  );
}
