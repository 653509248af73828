// The revenue view: a range of months and a currency (kept in the URL), the figures of the range's last
// month, MRR over time (monthly or daily, converted when the operator loaded rates: revenue-mrr-card.tsx)
// and each month's movements, the cohorts (revenue-cohorts.tsx), MRR by the customers' first or last touch, the
// acquisition funnel, and the reconciliation of one month. Every money figure opens its drill-down: the
// records, movements or customers that add up to it. Money is per currency, never summed across them unless
// the page is converted (the range bar's "Converted to X", once the operator loaded rates: every card, chart
// and table that can be, through the API's convert_to, labelled as converted), and reads as money (../money.ts): cents in the tables, compact on the cards, each card's exact amount in its
// title. A project without revenue in the currency shows how to send it instead of zeros
// (revenue-onboarding.tsx). Each card loads and fails on its own, with a Retry button.
import { useMemo, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import type {
  AcquisitionFunnel,
  Annotation,
  Annotations,
  Attribution,
  CustomerList,
  ExchangeRates,
  MrrMonth,
  Reconciliation,
} from '../api/types.ts';
import { useQuery } from '../api/use-query.ts';
import { formatCount, formatPercent } from '../format.ts';
import { formatMoney, formatMoneyExact, formatMoneyShort } from '../money.ts';
import { useSignInOn } from '../pages/session.ts';
import { annotationsPerBucket } from '../query/annotations.ts';
import { CurrencyPicker } from '../ui/currency-picker.tsx';
import { GroupFiguresTable } from '../ui/group-figures-table.tsx';
import { ErrorMessage, Loading } from '../ui/messages.tsx';
import { MovementsChart, NO_NOTES } from '../ui/revenue-charts.tsx';
import { Tabs } from '../ui/tabs.tsx';
import { BreakdownCard, MetadataSearchCard, RevenueFilterChips } from './revenue-breakdown.tsx';
import { CohortsCard } from './revenue-cohorts.tsx';
import {
  type Conversion,
  currencyWords,
  DrilldownDialog,
  type DrillRequest,
  MissingRates,
  moneyParams,
  useRevenueState,
} from './revenue-common.tsx';
import { MrrOverTimeCard } from './revenue-mrr-card.tsx';
import { RevenueOnboarding } from './revenue-onboarding.tsx';
import {
  addMonths,
  formatTime,
  lastDay,
  MONTH,
  microsOf,
  moneyOfMicros,
  monthLabel,
  type RevenueState,
  timesTwelve,
} from './revenue-state.ts';
import type { ViewProps } from './view-props.ts';

const BY_TABS = [
  { id: 'channel', label: 'Channel' },
  { id: 'source', label: 'Source' },
  { id: 'utm_campaign', label: 'Campaign' },
];
const TOUCH_TABS = [
  { id: 'first', label: 'First touch' },
  { id: 'last', label: 'Last touch before payment' },
];

const NO_ANNOTATIONS: Annotation[] = [];

export function RevenueView({ api, project, path }: ViewProps) {
  const { state, update } = useRevenueState(path, project.today);
  const [drill, setDrill] = useState<DrillRequest | null>(null);
  const base = `/projects/${encodeURIComponent(project.id)}/revenue`;
  const rates = useQuery<ExchangeRates>(api, `${base}/exchange-rates`);
  // Converted only to a currency rates are loaded for (a shared link may name another).
  const conversion: Conversion = {
    target: rates.data?.bases.includes('EUR') ? 'EUR' : rates.data?.bases[0],
    to: state.convert && rates.data?.bases.includes(state.convert) ? state.convert : undefined,
  };
  const months = useQuery<MrrMonth[]>(api, `${base}/mrr`, {
    from: state.from,
    to: state.to,
    ...moneyParams(state, conversion),
    filters: state.filters || undefined,
  });
  // The project's notes, drawn on the revenue charts as on the traffic chart (revenue months are UTC's).
  const annotations = useQuery<Annotations>(api, `/projects/${encodeURIComponent(project.id)}/annotations`);
  const notes = annotations.data?.annotations ?? NO_ANNOTATIONS;
  const monthNotes = useMemo(
    () =>
      months.data
        ? annotationsPerBucket(
            months.data.map((m) => `${m.month}-01`),
            lastDay(state.to),
            notes,
            'UTC',
          )
        : NO_NOTES,
    [months.data, notes, state.to],
  );
  // Whether any customer has revenue in this currency (a project that never sent revenue has none): one
  // customer is enough to know. Filters left out: they narrow the figures, not whether revenue exists.
  const customers = useQuery<CustomerList>(api, `${base}/customers`, { currency: state.currency, limit: 1 });
  const { route } = useLocation();
  useSignInOn(api.kind === 'session' ? months.error : undefined, route);
  const customersPath = path.replace(/\/revenue$/, '/customers');
  const customerHref = (customer: string) => `${customersPath}?customer=${encodeURIComponent(customer)}`;
  const open = (figure: string, from = state.to, to = state.to, group?: DrillRequest['group']) =>
    setDrill({
      figure,
      from,
      to,
      ...(group ? { group } : {}),
      ...(state.filters ? { filters: state.filters } : {}),
    });

  if (customers.data?.total === 0 && !customers.stale) {
    return (
      <>
        <RangeBar api={api} projectId={project.id} state={state} update={update} conversion={conversion} />
        <RevenueOnboarding
          api={api}
          project={project}
          currency={state.currency}
          onCheck={() => {
            customers.reload();
            months.reload();
          }}
        />
      </>
    );
  }

  return (
    <>
      <RangeBar api={api} projectId={project.id} state={state} update={update} conversion={conversion} />
      <RevenueFilterChips state={state} update={update} customersPath={customersPath} />
      {months.error ? (
        <ErrorMessage error={months.error} what="The revenue figures" onRetry={months.reload} />
      ) : !months.data || (!customers.data && !customers.error) ? (
        <Loading />
      ) : (
        <div class={months.stale ? 'is-stale' : ''}>
          <RevenueFigures
            months={months.data}
            state={state}
            conversion={conversion}
            {...(conversion.to ? {} : { open })}
          />
          <div class="panels">
            <MrrOverTimeCard
              api={api}
              base={base}
              state={state}
              update={update}
              today={project.today}
              months={months.data}
              conversion={conversion}
              notes={notes}
            />
            <section class="card chart-card" aria-labelledby="movements-title">
              <div class="card-head">
                <h2 id="movements-title">
                  Movements <span class="muted">{currencyWords(state, conversion)}, per month</span>
                </h2>
              </div>
              <MovementsChart
                months={months.data}
                currency={conversion.to ?? state.currency}
                notes={monthNotes}
              />
            </section>
          </div>
        </div>
      )}
      <CohortsCard api={api} base={base} state={state} update={update} conversion={conversion} />
      <AttributionCard
        api={api}
        base={base}
        state={state}
        update={update}
        open={open}
        conversion={conversion}
      />
      <BreakdownCard
        api={api}
        base={base}
        state={state}
        update={update}
        drill={setDrill}
        conversion={conversion}
      />
      <FunnelCard api={api} base={base} state={state} conversion={conversion} />
      <ReconciliationCard api={api} base={base} state={state} update={update} customerHref={customerHref} />
      <MetadataSearchCard api={api} base={base} customerHref={customerHref} />
      <DrilldownDialog
        api={api}
        project={project.id}
        currency={state.currency}
        request={drill}
        customerHref={customerHref}
        onClose={() => setDrill(null)}
      />
    </>
  );
}

function RangeBar({
  api,
  projectId,
  state,
  update,
  conversion,
}: {
  api: ViewProps['api'];
  projectId: string;
  state: RevenueState;
  update(p: Partial<RevenueState>): void;
  conversion: Conversion;
}) {
  return (
    <section class="toolbar revenue-toolbar" aria-label="Months and currency">
      <label class="field inline">
        <span class="field-label">From</span>
        <input
          type="month"
          value={state.from}
          max={state.to}
          onChange={(e) => {
            const v = (e.currentTarget as HTMLInputElement).value;
            if (MONTH.test(v)) update({ from: v });
          }}
        />
      </label>
      <label class="field inline">
        <span class="field-label">To</span>
        <input
          type="month"
          value={state.to}
          min={state.from}
          onChange={(e) => {
            const v = (e.currentTarget as HTMLInputElement).value;
            if (MONTH.test(v)) update({ to: v, month: v });
          }}
        />
      </label>
      <CurrencyPicker
        api={api}
        projectId={projectId}
        value={state.currency}
        onChange={(currency) => update({ currency })}
      />
      {conversion.target ? (
        <label class="converted-switch">
          <input
            type="checkbox"
            checked={conversion.to !== undefined}
            onChange={(e) =>
              update({ convert: (e.currentTarget as HTMLInputElement).checked ? conversion.target : '' })
            }
          />{' '}
          Converted to {conversion.to ?? conversion.target}
        </label>
      ) : null}
      <p class="hint">
        {conversion.to
          ? `Calendar months in UTC. Every currency converted to ${conversion.to} with the exchange rates the operator loaded, each month at its rate; the funnel's money as the converted customers'; the reconciliation stays in ${state.currency}.`
          : 'Calendar months in UTC. Amounts are never added across currencies.'}
      </p>
    </section>
  );
}

function RevenueFigures(props: {
  months: MrrMonth[];
  state: RevenueState;
  conversion: Conversion;
  /** Opens a figure's drill-down; none for converted figures (their items are in their own currencies). */
  open?: (figure: string, from?: string, to?: string) => void;
}) {
  const last = props.months.at(-1);
  if (!last) return null;
  const { from, to } = props.state;
  const currency = props.conversion.to ?? props.state.currency;
  const cashText = moneyOfMicros(props.months.reduce((total, m) => total + microsOf(m.cash_revenue), 0n));
  // A card shows money compact past 10,000 and rounded to cents; its title has the exact amount.
  const money = (text: string | null) => ({
    value: formatMoneyShort(text, currency),
    exact: formatMoneyExact(text, currency),
  });
  const figures: Array<{
    id: string;
    label: string;
    value: string;
    exact?: string;
    note: string;
    figure?: string;
    range?: boolean;
  }> = [
    {
      id: 'mrr',
      label: 'MRR',
      ...money(last.mrr_end),
      note: `end of ${monthLabel(last.month)}`,
      figure: 'mrr_end',
    },
    { id: 'arr', label: 'ARR', ...money(timesTwelve(last.mrr_end)), note: '12 × MRR' },
    { id: 'net-new', label: 'Net new MRR', ...money(last.net_new), note: monthLabel(last.month) },
    {
      id: 'new',
      label: 'New business',
      ...money(last.new),
      note: monthLabel(last.month),
      figure: 'new',
    },
    {
      id: 'churned',
      label: 'Churned MRR',
      ...money(last.churn),
      note: monthLabel(last.month),
      figure: 'churn',
    },
    {
      id: 'paying',
      label: 'Paying customers',
      value: formatCount(last.customers_end),
      note: `end of ${monthLabel(last.month)}`,
      figure: 'paying_customers',
    },
    { id: 'arpa', label: 'ARPA', ...money(last.arpa), note: 'MRR / paying customers' },
    { id: 'ltv', label: 'LTV', ...money(last.ltv), note: 'ARPA / customer churn, 3 months' },
    {
      id: 'gross-churn',
      label: 'Gross revenue churn',
      value: formatPercent(last.gross_revenue_churn_rate),
      note: monthLabel(last.month),
    },
    {
      id: 'net-churn',
      label: 'Net revenue churn',
      value: formatPercent(last.net_revenue_churn_rate),
      note: monthLabel(last.month),
    },
    {
      id: 'logo-churn',
      label: 'Customer churn',
      value: formatPercent(last.customer_churn_rate),
      note: monthLabel(last.month),
    },
    {
      id: 'cash',
      label: 'Cash revenue',
      ...money(cashText),
      note: from === to ? monthLabel(to) : `${monthLabel(from)} – ${monthLabel(to)}`,
      figure: 'cash_revenue',
      range: true,
    },
  ];
  return (
    <section class="top-figures" aria-label="Revenue figures">
      {props.conversion.to ? (
        <p class="converted-label">
          In {props.conversion.to}, converted: every currency at each month's exchange rate.
        </p>
      ) : null}
      <ul class="figures">
        {figures.map((f) => {
          const body = (
            <>
              <span class="figure-label">{f.label}</span>
              <span
                class="figure-value"
                id={`revenue-${f.id}`}
                title={f.exact && f.exact !== f.value ? `Exactly ${f.exact}` : undefined}
              >
                {f.value}
              </span>
              <span class="change neutral">{f.note}</span>
            </>
          );
          return (
            <li key={f.id}>
              {f.figure && props.open ? (
                <button
                  type="button"
                  class="figure"
                  title="Open what makes up this figure"
                  onClick={() => props.open?.(f.figure as string, f.range ? from : to, to)}
                >
                  {body}
                </button>
              ) : (
                <div class="figure">{body}</div>
              )}
            </li>
          );
        })}
      </ul>
      <MissingRates answer={props.months.at(-1) as { missing_currencies?: string[] } | undefined} />
    </section>
  );
}

function AttributionCard(props: {
  api: ViewProps['api'];
  base: string;
  state: RevenueState;
  update(p: Partial<RevenueState>): void;
  open(figure: string, from: string, to: string, group?: DrillRequest['group']): void;
  conversion: Conversion;
}) {
  const { state, conversion } = props;
  const result = useQuery<Attribution>(props.api, `${props.base}/attribution`, {
    from: state.from,
    to: state.to,
    ...moneyParams(state, conversion),
    by: state.by,
    touch: state.touch,
    filters: state.filters || undefined,
  });
  const data = result.data;
  return (
    <section class="card attribution" aria-labelledby="attribution-title">
      <div class="card-head">
        <h2 id="attribution-title">
          MRR by acquisition{' '}
          <span class="muted">
            {currencyWords(state, conversion)}, {monthLabel(state.from)} – {monthLabel(state.to)}
          </span>
        </h2>
      </div>
      <div class="switches">
        <Tabs
          tabs={BY_TABS}
          current={state.by}
          label="Group by"
          onSelect={(by) => props.update({ by: by as RevenueState['by'] })}
        />
        <Tabs
          tabs={TOUCH_TABS}
          current={state.touch}
          label="Touch"
          onSelect={(touch) => props.update({ touch: touch as RevenueState['touch'] })}
        />
      </div>
      {result.error ? (
        <ErrorMessage error={result.error} what="MRR by acquisition" onRetry={result.reload} />
      ) : !data ? (
        <Loading />
      ) : (
        <GroupFiguresTable
          id="attribution-table"
          heading={BY_TABS.find((t) => t.id === state.by)?.label ?? state.by}
          rows={data.rows}
          total={data.total}
          currency={data.currency}
          stale={result.stale}
          {...(conversion.to
            ? {}
            : {
                open: (column, row) =>
                  row
                    ? props.open(column, state.from, state.to, {
                        by: state.by,
                        touch: state.touch,
                        key: row.key,
                      })
                    : props.open(column, state.from, state.to),
              })}
        />
      )}
      <MissingRates answer={data} />
      <p class="footnote">
        A customer's first touch is the earliest visit of the visitors linked to it (identify records, and the
        visitor of its revenue records); its last touch, the last of them before its first payment. Rows add
        up exactly to the total, which is the MRR report's.
      </p>
    </section>
  );
}

function FunnelCard(props: {
  api: ViewProps['api'];
  base: string;
  state: RevenueState;
  conversion: Conversion;
}) {
  const { state } = props;
  const result = useQuery<AcquisitionFunnel>(props.api, `${props.base}/funnel`, {
    from: `${state.from}-01`,
    to: lastDay(state.to),
    by: state.by,
    ...moneyParams(state, props.conversion),
  });
  const data = result.data;
  return (
    <section class="card" aria-labelledby="funnel-title">
      <div class="card-head">
        <h2 id="funnel-title">
          Acquisition funnel{' '}
          <span class="muted">
            visitors first seen {monthLabel(state.from)} – {monthLabel(state.to)}
            {props.conversion.to
              ? `, money in ${currencyWords(state, props.conversion)} (MRR now at each currency's latest rate, cash at each payment's month's rate)`
              : ''}
          </span>
        </h2>
      </div>
      <MissingRates answer={data} />
      {result.error ? (
        <ErrorMessage error={result.error} what="The acquisition funnel" onRetry={result.reload} />
      ) : !data ? (
        <Loading />
      ) : data.rows.length === 0 ? (
        <p class="empty">No visitors first seen in these months.</p>
      ) : (
        <div class="table-scroll">
          <table class="plain figures-table" id="funnel-table">
            <thead>
              <tr>
                <th scope="col">{BY_TABS.find((t) => t.id === state.by)?.label}</th>
                <th scope="col" class="num">
                  Visitors
                </th>
                <th scope="col" class="num">
                  Identified
                </th>
                <th scope="col" class="num">
                  Paying
                </th>
                <th scope="col" class="num">
                  MRR now
                </th>
                <th scope="col" class="num">
                  Cash to date
                </th>
                <th scope="col" class="num">
                  MRR / 1,000 visitors
                </th>
              </tr>
            </thead>
            <tbody>
              {[...data.rows, { key: 'Total', ...data.total }].map((row) => (
                <tr key={row.key} class={row.key === 'Total' ? 'total-row' : ''}>
                  <th scope="row">{row.key}</th>
                  <td class="num">{formatCount(row.visitors)}</td>
                  <td class="num">
                    {formatCount(row.identified)}{' '}
                    <span class="muted">{formatPercent(row.identified_rate)}</span>
                  </td>
                  <td class="num">
                    {formatCount(row.paying)} <span class="muted">{formatPercent(row.paying_rate)}</span>
                  </td>
                  <td class="num">{formatMoney(row.mrr, data.currency)}</td>
                  <td class="num">{formatMoney(row.cash_revenue, data.currency)}</td>
                  <td class="num" title={formatMoneyExact(row.mrr_per_1000_visitors, data.currency)}>
                    {formatMoney(row.mrr_per_1000_visitors, data.currency)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function ReconciliationCard(props: {
  api: ViewProps['api'];
  base: string;
  state: RevenueState;
  update(p: Partial<RevenueState>): void;
  customerHref(customer: string): string;
}) {
  const { state } = props;
  const result = useQuery<Reconciliation>(props.api, `${props.base}/reconciliation`, {
    month: state.month,
    currency: state.currency,
  });
  const months: string[] = [];
  for (let m = state.to; m >= state.from && months.length < 120; m = addMonths(m, -1)) months.push(m);
  const r = result.data;
  return (
    <section class="card" aria-labelledby="reconciliation-title">
      <div class="card-head">
        <h2 id="reconciliation-title">
          Reconciliation{' '}
          <span class="muted">
            {state.currency}
            {state.convert ? ' (not converted: the records of one currency)' : ''}
          </span>
        </h2>
        <label class="field inline">
          <span class="field-label">Month</span>
          <select
            id="reconciliation-month"
            value={state.month}
            onChange={(e) => props.update({ month: (e.currentTarget as HTMLSelectElement).value })}
          >
            {months.map((m) => (
              <option key={m} value={m}>
                {monthLabel(m)}
              </option>
            ))}
          </select>
        </label>
      </div>
      {result.error ? (
        <ErrorMessage error={result.error} what="The reconciliation" onRetry={result.reload} />
      ) : !r ? (
        <Loading />
      ) : (
        <div class={result.stale ? 'reconciliation is-stale' : 'reconciliation'}>
          {r.errors.length > 0 ? (
            <div class="error" role="alert" id="reconciliation-errors">
              <p>The numbers do not close:</p>
              <ul>
                {r.errors.map((e) => (
                  <li key={e}>{e}</li>
                ))}
              </ul>
            </div>
          ) : (
            <p class="notice ok" id="bridge-closes">
              The MRR bridge closes to the cent, and the movements match the stored movements.
            </p>
          )}
          <div class="panels">
            <table class="plain" id="cash-table">
              <caption>Cash revenue, {r.currency}</caption>
              <tbody>
                {(
                  [
                    ['Recurring', r.cash.recurring],
                    ['One-off', r.cash.one_off],
                    ['Refunds', r.cash.refunds],
                    ['Churn amounts', r.cash.churn],
                    ['Without a type', r.cash.unlabelled],
                  ] as const
                ).map(([label, value]) => (
                  <tr key={label}>
                    <th scope="row">{label}</th>
                    <td class="num">{formatMoneyExact(value, r.currency)}</td>
                  </tr>
                ))}
              </tbody>
              <tfoot>
                <tr>
                  <th scope="row">Total ({r.cash.records} records)</th>
                  <td class="num">{formatMoneyExact(r.cash.total, r.currency)}</td>
                </tr>
              </tfoot>
            </table>
            <table class="plain" id="bridge-table">
              <caption>MRR bridge, {r.currency}</caption>
              <tbody>
                {(
                  [
                    ['MRR at the start', r.bridge.mrr_start],
                    ['+ New business', r.bridge.new],
                    ['+ Expansion', r.bridge.expansion],
                    ['+ Reactivation', r.bridge.reactivation],
                    ['− Contraction', r.bridge.contraction],
                    ['− Churn', r.bridge.churn],
                    ['= Computed end', r.bridge.computed_end],
                  ] as const
                ).map(([label, value]) => (
                  <tr key={label}>
                    <th scope="row">{label}</th>
                    <td class="num">{formatMoneyExact(value, r.currency)}</td>
                  </tr>
                ))}
              </tbody>
              <tfoot>
                <tr class={r.bridge.closes ? '' : 'bad'}>
                  <th scope="row">MRR at the end</th>
                  <td class="num">{formatMoneyExact(r.bridge.mrr_end, r.currency)}</td>
                </tr>
              </tfoot>
            </table>
          </div>
          <h3>Data warnings</h3>
          {r.warnings.length === 0 ? (
            <p class="empty">None this month.</p>
          ) : (
            <ul class="warnings" id="reconciliation-warnings">
              {r.warnings.map((w) => (
                <li key={w.transaction_id}>
                  {formatTime(w.timestamp)} · <a href={props.customerHref(w.customer_id)}>{w.customer_id}</a>{' '}
                  · <span class="mono">{w.transaction_id}</span> ({w.record_ids.join(', ') || 'no record id'}
                  ): {w.message}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </section>
  );
}
