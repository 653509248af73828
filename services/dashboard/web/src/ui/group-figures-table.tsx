// The table of a revenue split into groups of customers (attribution by touch, breakdown by a customer
// attribute): one row per group with its customers and money figures, the total below. Every money cell
// opens the drill-down of its figure (the caller says for which customers); the groups add up to the total.
// Cells read rounded to cents; each cell's title and the drill-down it opens give the exact amount.
import type { ComponentChildren } from 'preact';
import type { AttributionFigures, AttributionRow } from '../api/types.ts';
import { formatCount } from '../format.ts';
import { formatMoney, formatMoneyExact } from '../money.ts';

export const GROUP_MONEY_COLUMNS = [
  ['new', 'New'],
  ['expansion', 'Expansion'],
  ['reactivation', 'Reactiv.'],
  ['contraction', 'Contraction'],
  ['churn', 'Churn'],
  ['mrr_end', 'MRR at end'],
  ['cash_revenue', 'Cash'],
] as const;
export type GroupMoneyColumn = (typeof GROUP_MONEY_COLUMNS)[number][0];

export function GroupFiguresTable(props: {
  id: string;
  /** The heading of the groups' column (the dimension). */
  heading: string;
  rows: readonly AttributionRow[];
  total: AttributionFigures;
  currency: string;
  stale: boolean;
  /**
   * Opens the drill-down of a figure of a group, or of the total (row null); without it (converted
   * figures, whose items are in their own currencies) the figures are plain text.
   */
  open?: (column: GroupMoneyColumn, row: AttributionRow | null) => void;
  /** The group's heading cell (the key as text when not given). */
  rowHeader?: (row: AttributionRow) => ComponentChildren;
}) {
  return (
    <div class={props.stale ? 'table-scroll is-stale' : 'table-scroll'}>
      <table class="plain figures-table" id={props.id}>
        <thead>
          <tr>
            <th scope="col">{props.heading}</th>
            <th scope="col" class="num">
              Customers
            </th>
            <th scope="col" class="num">
              Paying
            </th>
            {GROUP_MONEY_COLUMNS.map(([, label]) => (
              <th key={label} scope="col" class="num">
                {label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row) => (
            <tr key={row.key}>
              <th scope="row">{props.rowHeader ? props.rowHeader(row) : row.key}</th>
              <td class="num">{formatCount(row.customers)}</td>
              <td class="num">{formatCount(row.paying_customers)}</td>
              {GROUP_MONEY_COLUMNS.map(([column]) => (
                <td key={column} class="num">
                  {props.open ? (
                    <button
                      type="button"
                      class="cell-link"
                      aria-label={`${row.key}: open ${column.replace('_', ' ')} ${formatMoneyExact(row[column], props.currency)}`}
                      title={formatMoneyExact(row[column], props.currency)}
                      onClick={() => props.open?.(column, row)}
                    >
                      {formatMoney(row[column], props.currency)}
                    </button>
                  ) : (
                    <span title={formatMoneyExact(row[column], props.currency)}>
                      {formatMoney(row[column], props.currency)}
                    </span>
                  )}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr>
            <th scope="row">Total</th>
            <td class="num">{formatCount(props.total.customers)}</td>
            <td class="num">{formatCount(props.total.paying_customers)}</td>
            {GROUP_MONEY_COLUMNS.map(([column]) => (
              <td key={column} class="num" id={`${props.id}-total-${column}`}>
                {props.open ? (
                  <button
                    type="button"
                    class="cell-link"
                    title={formatMoneyExact(props.total[column], props.currency)}
                    onClick={() => props.open?.(column, null)}
                  >
                    {formatMoney(props.total[column], props.currency)}
                  </button>
                ) : (
                  <span title={formatMoneyExact(props.total[column], props.currency)}>
                    {formatMoney(props.total[column], props.currency)}
                  </span>
                )}
              </td>
            ))}
          </tr>
        </tfoot>
      </table>
    </div>
  );
}
