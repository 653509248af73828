// One breakdown as a bar list: a table whose first cell carries a bar as long as the row's main figure
// against the largest, then the counts and the row's share of the total. Column headers sort (the API
// sorts, so the top rows are the top rows of the whole range); a value is a button that filters every
// panel by it. The details search filters the rows loaded, in the browser (the API has no search): when the
// list has more rows than were loaded, it says so.
import { useState } from 'preact/hooks';
import type { Breakdown, BreakdownDimension } from '../api/types.ts';
import { useQuery } from '../api/use-query.ts';
import { formatCount, formatPercent } from '../format.ts';
import { useTraffic } from '../views/traffic-context.ts';
import {
  type Column,
  columnsOf,
  DIMENSION_LABELS,
  flagOf,
  mainColumn,
  type SortKey,
  valueLabel,
} from './breakdown-columns.ts';
import { ErrorMessage } from './messages.tsx';

export interface Sort {
  key: SortKey | 'value';
  order: 'desc' | 'asc';
}

export function breakdownPath(projectId: string, dimension: BreakdownDimension): string {
  return `/projects/${encodeURIComponent(projectId)}/traffic/breakdown/${dimension}`;
}

export function BreakdownList(props: {
  dimension: BreakdownDimension;
  /** For event_property: the property's key. */
  property?: string;
  limit: number;
  /** Every column (the details), or the short list's. */
  full?: boolean;
  caption: string;
  /** What choosing a value does instead of filtering by it (the property keys choose a key). */
  choose?: { label: string; onValue(value: string): void };
  /** The details' search: only the rows whose value contains it (case aside). */
  search?: string;
}) {
  const { api, project, params, addFilter } = useTraffic();
  const [sort, setSort] = useState<Sort | null>(null);
  const query = {
    ...params,
    limit: props.limit,
    ...(props.property ? { property: props.property } : {}),
    ...(sort ? { sort: sort.key, order: sort.order } : {}),
  };
  const result = useQuery<Breakdown>(api, breakdownPath(project.id, props.dimension), query);
  const columns = columnsOf(props.dimension).filter((c) => props.full || c.compact);
  const main = mainColumn(props.dimension);
  // A path that was not found filters like a page: its visits are the ones that saw it.
  const filterDimension =
    props.dimension === 'event_property'
      ? `prop:${props.property}`
      : props.dimension === 'not_found'
        ? 'page'
        : props.dimension;

  if (result.error) return <ErrorMessage error={result.error} what={props.caption} onRetry={result.reload} />;
  const all = result.data?.rows;
  // A UTM list names the visits that carried the parameter: the rest ("(not set)", most visits of most
  // sites) would head every such list, so they are counted below it instead of listed.
  const unset = props.dimension.startsWith('utm_') ? all?.find((r) => r.value === '') : undefined;
  const loaded = unset ? all?.filter((r) => r !== unset) : all;
  if (loaded && loaded.length === 0 && !unset && !result.stale)
    return props.dimension === 'not_found' ? (
      <p class="empty">
        No page reported itself not found in this range. To list yours, add{' '}
        <code>
          {"<script>tally('event', '404', { path: location.pathname, referrer: document.referrer })</script>"}
        </code>{' '}
        after the Tally tag on your 404 page.
      </p>
    ) : (
      <p class="empty">No data for this range.</p>
    );
  const max = Math.max(1, ...(loaded ?? []).map((r) => (r[main.key] as number | undefined) ?? 0));
  const needle = props.search?.trim().toLocaleLowerCase() ?? '';
  const rows = needle
    ? loaded?.filter((r) =>
        `${r.value}\n${valueLabel(props.dimension, r.value)}`.toLocaleLowerCase().includes(needle),
      )
    : loaded;
  // A list cut at the limit, or whose rows add up to less than its total, has more rows than were loaded.
  const shownTotal = (all ?? []).reduce((sum, r) => sum + ((r[main.key] as number | undefined) ?? 0), 0);
  const more = all !== undefined && (all.length >= props.limit || shownTotal < (result.data?.total ?? 0));

  const header = (key: Sort['key'], label: string, className?: string) => {
    const active = sort?.key === key || (!sort && key === main.key);
    const order = sort?.key === key ? sort.order : key === 'value' ? 'asc' : 'desc';
    return (
      <th
        scope="col"
        class={className}
        aria-sort={active ? (order === 'asc' ? 'ascending' : 'descending') : undefined}
      >
        <button
          type="button"
          class="sort"
          onClick={() =>
            setSort({
              key,
              order: active ? (order === 'desc' ? 'asc' : 'desc') : key === 'value' ? 'asc' : 'desc',
            })
          }
        >
          {label}
          <span aria-hidden="true" class="sort-mark">
            {active ? (order === 'asc' ? '▲' : '▼') : ''}
          </span>
        </button>
      </th>
    );
  };

  return (
    <>
      {props.search !== undefined && loaded && (needle || more) && (
        <p class="hint search-note" id="search-note">
          {needle ? `${rows?.length ?? 0} of ${loaded.length} rows match. ` : ''}
          {more
            ? `The search looks only at the ${loaded.length} rows shown, the top ones of the list as sorted; the CSV export has every row.`
            : ''}
        </p>
      )}
      <table
        class={`${result.stale || result.loading ? 'bars is-stale' : 'bars'}${props.full ? ' full' : ''}`}
        aria-busy={result.loading}
        data-dimension={props.dimension}
      >
        <caption class="sr-only">{props.caption}</caption>
        <thead>
          <tr>
            {header('value', DIMENSION_LABELS[props.dimension], 'value-col')}
            {columns.map((c: Column) =>
              header(c.key, c.label, c.key === 'visitors' && !props.full ? 'num hide-narrow' : 'num'),
            )}
            <th scope="col" class="num">
              Share
            </th>
          </tr>
        </thead>
        <tbody>
          {(rows ?? []).map((row) => {
            const label = valueLabel(props.dimension, row.value);
            const flag = props.dimension === 'country' ? flagOf(row.value) : '';
            const action = props.choose
              ? `${props.choose.label} ${label}`
              : `Filter by ${DIMENSION_LABELS[props.dimension].toLowerCase()} ${label}`;
            const width = (((row[main.key] as number | undefined) ?? 0) / max) * 100;
            return (
              <tr key={row.value}>
                <td class="value-col">
                  <span class="bar" style={{ width: `${width}%` }} aria-hidden="true" />
                  <button
                    type="button"
                    class="row-filter"
                    aria-label={action}
                    title={action}
                    onClick={() =>
                      props.choose ? props.choose.onValue(row.value) : addFilter(filterDimension, row.value)
                    }
                  >
                    {flag && (
                      <span class="flag" aria-hidden="true">
                        {flag}
                      </span>
                    )}
                    <span class={row.value === '' ? 'value-text muted' : 'value-text'}>{label}</span>
                  </button>
                </td>
                {columns.map((c) => (
                  <td key={c.key} class={c.key === 'visitors' && !props.full ? 'num hide-narrow' : 'num'}>
                    {c.format(row)}
                  </td>
                ))}
                <td class="num share">{formatPercent(row.share)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {needle && rows?.length === 0 && <p class="empty">No row matches {props.search?.trim()}.</p>}
      {unset && (
        <p class="hint unset-note">
          {loaded?.length === 0 ? 'No visit carried this parameter; ' : 'Not listed: '}
          {formatCount((unset[main.key] as number | undefined) ?? 0)} {main.label.toLowerCase()} without it.
        </p>
      )}
    </>
  );
}
