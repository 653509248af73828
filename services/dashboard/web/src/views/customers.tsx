// Customers: the list (MRR now, status, first seen, first-touch channel and source, lifetime cash; in one
// currency, or every currency converted once the operator loaded rates: "Converted to X"), and with
// `?customer=<id>` one customer's page: its MRR per currency (or converted, as its row of the converted
// list), first and last touch, MRR history per subscription, every revenue record, and the visits of its
// visitors before and after it was identified.
import { useLocation } from 'preact-iso';
import type { CustomerList, CustomerPage, ExchangeRates } from '../api/types.ts';
import { useQuery } from '../api/use-query.ts';
import { formatCount } from '../format.ts';
import { formatMoney } from '../money.ts';
import { useSignInOn } from '../pages/session.ts';
import { CurrencyPicker } from '../ui/currency-picker.tsx';
import { ErrorMessage, Loading } from '../ui/messages.tsx';
import { formatTime } from './revenue-state.ts';
import type { ViewProps } from './view-props.ts';

const PAGE = 50;

/** A customer's name and email, as its revenue records' metadata gave them ('' when neither). */
const contactOf = (c: { name: string | null; email: string | null } | undefined) =>
  [c?.name, c?.email].filter(Boolean).join(' · ');
const STATUS_NAMES = { active: 'Paying', churned: 'Churned', one_off: 'One-off' } as const;

export function CustomersView({ api, project, path }: ViewProps) {
  const { query } = useLocation();
  const customer = query.customer;
  return customer ? (
    <CustomerDetail api={api} projectId={project.id} path={path} customer={customer} />
  ) : (
    <CustomerTable api={api} projectId={project.id} path={path} />
  );
}

const SORTS = {
  customer_id: { label: 'Customer', first: 'asc' },
  mrr: { label: 'MRR', first: 'desc' },
  first_seen: { label: 'First seen', first: 'asc' },
  cash: { label: 'Lifetime cash', first: 'desc' },
} as const;
type SortKey = keyof typeof SORTS;
const SORT_TITLES: Record<SortKey, [string, string]> = {
  customer_id: ['by id', 'by id, Z to A'],
  mrr: ['largest MRR first', 'smallest MRR first'],
  first_seen: ['first seen first', 'last seen first'],
  cash: ['most lifetime cash first', 'least lifetime cash first'],
};

function CustomerTable({ api, projectId, path }: { api: ViewProps['api']; projectId: string; path: string }) {
  const { query, route } = useLocation();
  const currency = /^[A-Za-z]{3}$/.test(query.currency ?? '')
    ? (query.currency as string).toUpperCase()
    : 'USD';
  const offset = Math.max(0, Number.parseInt(query.offset ?? '0', 10) || 0);
  const sort: SortKey = (query.sort ?? '') in SORTS ? (query.sort as SortKey) : 'mrr';
  const order = query.order === 'asc' || query.order === 'desc' ? query.order : SORTS[sort].first;
  const status =
    query.status && query.status in STATUS_NAMES ? (query.status as keyof typeof STATUS_NAMES) : '';
  const search = query.search ?? '';
  const base = `/projects/${encodeURIComponent(projectId)}/revenue`;
  // "Converted to X" (as on Revenue, `convert` in the URL): only to a currency the operator loaded rates to.
  const rates = useQuery<ExchangeRates>(api, `${base}/exchange-rates`);
  const target = rates.data?.bases.includes('EUR') ? 'EUR' : rates.data?.bases[0];
  const wanted = (query.convert ?? '').toUpperCase();
  const convertTo = wanted && rates.data?.bases.includes(wanted) ? wanted : undefined;
  const list = useQuery<CustomerList>(api, `${base}/customers`, {
    ...(convertTo ? { convert_to: convertTo } : { currency }),
    limit: PAGE,
    offset,
    filters: query.filters || undefined,
    search: search || undefined,
    status: status || undefined,
    ...(sort !== 'mrr' || order !== 'desc' ? { sort, order } : {}),
  });
  useSignInOn(api.kind === 'session' ? list.error : undefined, route);
  /** The list's URL with `changes` (a change of search, status or order starts at the first page). */
  const link = (changes: Record<string, string>) => {
    const next: Record<string, string> = {
      currency: currency !== 'USD' ? currency : '',
      convert: convertTo ?? '',
      filters: query.filters ?? '',
      search,
      status,
      sort: sort !== 'mrr' || order !== 'desc' ? sort : '',
      order: sort !== 'mrr' || order !== 'desc' ? order : '',
      offset: '',
      ...changes,
    };
    const params = new URLSearchParams(Object.entries(next).filter(([, v]) => v !== '' && v !== '0'));
    return params.size > 0 ? `${path}?${params}` : path;
  };
  const page = (o: number) => link({ offset: String(o) });
  const header = (key: SortKey, className?: string) => {
    const active = sort === key;
    const nextOrder = active ? (order === 'asc' ? 'desc' : 'asc') : SORTS[key].first;
    return (
      <th
        scope="col"
        class={className}
        aria-sort={active ? (order === 'asc' ? 'ascending' : 'descending') : undefined}
      >
        <button type="button" class="sort" onClick={() => route(link({ sort: key, order: nextOrder }))}>
          {SORTS[key].label}
          <span aria-hidden="true" class="sort-mark">
            {active ? (order === 'asc' ? '▲' : '▼') : ''}
          </span>
        </button>
      </th>
    );
  };
  if (list.error) return <ErrorMessage error={list.error} what="Customers" onRetry={list.reload} />;
  if (!list.data) return <Loading />;
  const data = list.data;
  const sortTitle = SORT_TITLES[sort][order === SORTS[sort].first ? 0 : 1];
  return (
    <section class="card" aria-labelledby="customers-title">
      <div class="card-head">
        <h2 id="customers-title">
          Customers{' '}
          <span class="muted">
            {convertTo
              ? `${formatCount(data.total)}, every currency converted to ${convertTo}, ${sortTitle}`
              : `${formatCount(data.total)} with ${currency} revenue, ${sortTitle}`}
          </span>
        </h2>
        <div class="switches">
          {convertTo ? null : (
            <CurrencyPicker
              api={api}
              projectId={projectId}
              value={currency}
              onChange={(chosen) => route(link({ currency: chosen !== 'USD' ? chosen : '' }))}
            />
          )}
          {target ? (
            <label class="converted-switch">
              <input
                type="checkbox"
                checked={convertTo !== undefined}
                onChange={(e) =>
                  route(link({ convert: (e.currentTarget as HTMLInputElement).checked ? target : '' }))
                }
              />{' '}
              Converted to {convertTo ?? target}
            </label>
          ) : null}
        </div>
      </div>
      {convertTo ? (
        <p class="hint converted-note">
          MRR now at each currency's latest exchange rate, lifetime cash at each payment's month's rate.
          {(data.missing_currencies ?? []).length > 0
            ? ` Left out where no exchange rate is loaded: ${(data.missing_currencies ?? []).join(', ')}.`
            : ''}
        </p>
      ) : null}
      <form
        class="customer-controls"
        aria-label="Find customers"
        onSubmit={(e) => {
          e.preventDefault();
          const form = new FormData(e.currentTarget as HTMLFormElement);
          route(link({ search: String(form.get('search') ?? '').trim() }));
        }}
      >
        <label class="field inline">
          <span class="field-label">Search</span>
          <input name="search" type="search" placeholder="id, name or email" defaultValue={search} />
        </label>
        <label class="field inline">
          <span class="field-label">Status</span>
          <select
            name="status"
            value={status}
            onChange={(e) => route(link({ status: (e.currentTarget as HTMLSelectElement).value }))}
          >
            <option value="">Any</option>
            {Object.entries(STATUS_NAMES).map(([value, name]) => (
              <option key={value} value={value}>
                {name}
              </option>
            ))}
          </select>
        </label>
      </form>
      {query.filters && (
        <p class="hint" id="customers-filters">
          Only the customers that match the revenue filters {query.filters}. <a href={path}>Show all</a>
        </p>
      )}
      {data.customers.length === 0 ? (
        <p class="empty">
          {search || status
            ? `No customer with ${currency} revenue matches${search ? ` "${search}"` : ''}${status ? ` (${STATUS_NAMES[status]})` : ''}.`
            : `No customer has revenue in ${currency} yet.`}
        </p>
      ) : (
        <div class="table-scroll">
          <table class="plain figures-table" id="customers-table">
            <thead>
              <tr>
                {header('customer_id')}
                {header('mrr', 'num')}
                <th scope="col">Status</th>
                {header('first_seen')}
                <th scope="col">First touch</th>
                {header('cash', 'num')}
              </tr>
            </thead>
            <tbody>
              {data.customers.map((c) => (
                <tr key={c.customer_id}>
                  <th scope="row">
                    <a
                      href={`${path}?customer=${encodeURIComponent(c.customer_id)}${convertTo ? `&convert=${convertTo}` : ''}`}
                    >
                      {c.customer_id}
                    </a>
                    {contactOf(c) && <span class="contact muted">{contactOf(c)}</span>}
                  </th>
                  <td class="num">{formatMoney(c.mrr, c.currency)}</td>
                  <td>
                    <span class={`status status-${c.status}`}>{STATUS_NAMES[c.status]}</span>
                  </td>
                  <td>{c.first_seen.slice(0, 10)}</td>
                  <td>
                    {c.first_touch
                      ? `${c.first_touch.channel} · ${c.first_touch.source || 'Direct / None'}`
                      : '(unattributed)'}
                  </td>
                  <td class="num">{formatMoney(c.cash_revenue, c.currency)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {data.total > PAGE && (
        <div class="card-foot">
          {offset > 0 && <a href={page(Math.max(0, offset - PAGE))}>Previous</a>}
          <span class="muted">
            {offset + 1}–{Math.min(offset + PAGE, data.total)} of {formatCount(data.total)}
          </span>
          {offset + PAGE < data.total && <a href={page(offset + PAGE)}>Next</a>}
        </div>
      )}
    </section>
  );
}

function CustomerDetail(props: { api: ViewProps['api']; projectId: string; path: string; customer: string }) {
  const { query, route } = useLocation();
  const base = `/projects/${encodeURIComponent(props.projectId)}/revenue`;
  // "Converted to X" as on the list (`convert` in the URL): the summaries become the list's converted row.
  const rates = useQuery<ExchangeRates>(props.api, `${base}/exchange-rates`);
  const target = rates.data?.bases.includes('EUR') ? 'EUR' : rates.data?.bases[0];
  const wanted = (query.convert ?? '').toUpperCase();
  const convertTo = wanted && rates.data?.bases.includes(wanted) ? wanted : undefined;
  const page = useQuery<CustomerPage>(
    props.api,
    `${base}/customers/${encodeURIComponent(props.customer)}`,
    convertTo ? { convert_to: convertTo } : {},
  );
  useSignInOn(props.api.kind === 'session' ? page.error : undefined, route);
  if (page.error)
    return <ErrorMessage error={page.error} what={`Customer ${props.customer}`} onRetry={page.reload} />;
  if (!page.data) return <Loading />;
  const c = page.data;
  const identified = c.identified_at;
  const converted = c.converted_to !== undefined;
  const self = (convert: string) =>
    `${props.path}?customer=${encodeURIComponent(props.customer)}${convert ? `&convert=${convert}` : ''}`;
  return (
    <>
      <p>
        <a href={convertTo ? `${props.path}?convert=${convertTo}` : props.path}>← All customers</a>
      </p>
      <section class="card" aria-labelledby="customer-title">
        <div class="card-head">
          <h2 id="customer-title">Customer {c.customer_id}</h2>
          {target && c.summaries.length > 0 ? (
            <label class="converted-switch">
              <input
                type="checkbox"
                checked={convertTo !== undefined}
                onChange={(e) => route(self((e.currentTarget as HTMLInputElement).checked ? target : ''))}
              />{' '}
              Converted to {convertTo ?? target}
            </label>
          ) : null}
        </div>
        {contactOf(c.summaries[0]) && (
          <p class="muted" id="customer-contact">
            {contactOf(c.summaries[0])}
          </p>
        )}
        <ul class="figures">
          {c.summaries.map((s) => (
            <li key={s.currency}>
              <div class="figure">
                <span class="figure-label">
                  MRR ({s.currency}
                  {converted ? ', converted' : ''})
                </span>
                <span class="figure-value" id={`customer-mrr-${s.currency}`}>
                  {formatMoney(s.mrr, s.currency)}
                </span>
                <span class="change neutral">
                  {STATUS_NAMES[s.status]} · lifetime cash {formatMoney(s.cash_revenue, s.currency)}
                </span>
              </div>
            </li>
          ))}
        </ul>
        {converted ? (
          <p class="hint converted-note" id="customer-converted-note">
            In {c.converted_to}, converted: MRR now at each currency's latest exchange rate, lifetime cash at
            each payment's month's rate. The history and records below stay in the currencies they were
            recorded in.
            {(c.missing_currencies ?? []).length > 0
              ? ` Left out where no exchange rate is loaded: ${(c.missing_currencies ?? []).join(', ')}.`
              : ''}
          </p>
        ) : null}
        <dl class="facts">
          <dt>First touch</dt>
          <dd id="customer-first-touch">
            {c.first_touch
              ? `${c.first_touch.channel} · ${c.first_touch.source || 'Direct / None'}${c.first_touch.utm_campaign ? ` · ${c.first_touch.utm_campaign}` : ''} · ${c.first_touch.entry_path} · ${formatTime(c.first_touch.start)}`
              : '(unattributed: no linked visit)'}
          </dd>
          <dt>Last touch before payment</dt>
          <dd>
            {c.last_touch
              ? `${c.last_touch.channel} · ${c.last_touch.entry_path} · ${formatTime(c.last_touch.start)}`
              : '—'}
          </dd>
          <dt>Identified</dt>
          <dd>{identified ? formatTime(identified) : 'never (linked by its revenue records only)'}</dd>
        </dl>
      </section>
      <section class="card" aria-labelledby="history-title">
        <h2 id="history-title">MRR history</h2>
        <div class="table-scroll">
          <table class="plain figures-table" id="history-table">
            <thead>
              <tr>
                <th scope="col">Date</th>
                <th scope="col">Record</th>
                <th scope="col">Subscription</th>
                <th scope="col" class="num">
                  Subscription MRR
                </th>
                <th scope="col" class="num">
                  Customer MRR
                </th>
                <th scope="col">Movement</th>
              </tr>
            </thead>
            <tbody>
              {c.history.map((h) => (
                <tr key={h.transaction_id}>
                  <td>{h.timestamp.slice(0, 10)}</td>
                  <td class="mono">{h.transaction_id}</td>
                  <td>{h.subscription || 'default'}</td>
                  <td class="num">{formatMoney(h.subscription_mrr, h.currency)}</td>
                  <td class="num">{formatMoney(h.customer_mrr, h.currency)}</td>
                  <td>
                    {h.movement ?? '—'}
                    {h.warning && <span class="warning-text"> ⚠ {h.warning}</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      <section class="card" aria-labelledby="records-title">
        <h2 id="records-title">Revenue records</h2>
        <div class="table-scroll">
          <table class="plain figures-table" id="records-table">
            <thead>
              <tr>
                <th scope="col">Date</th>
                <th scope="col">Transaction</th>
                <th scope="col">Type</th>
                <th scope="col" class="num">
                  Amount
                </th>
                <th scope="col" class="num">
                  MRR impact
                </th>
                <th scope="col">Metadata</th>
              </tr>
            </thead>
            <tbody>
              {c.records.map((r) => (
                <tr key={r.id}>
                  <td>{r.timestamp.slice(0, 10)}</td>
                  <td class="mono">{r.transaction_id}</td>
                  <td>{String(r.data.event_type ?? '—')}</td>
                  <td class="num">
                    {String(r.data.amount)} {String(r.data.currency ?? 'USD')}
                  </td>
                  <td class="num">
                    {r.data.mrr_impact === undefined || r.data.mrr_impact === null
                      ? '—'
                      : String(r.data.mrr_impact)}
                  </td>
                  <td class="mono">{r.data.metadata ? JSON.stringify(r.data.metadata) : ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      <section class="card" aria-labelledby="visits-title">
        <h2 id="visits-title">
          Visits <span class="muted">of the customer's visitors</span>
        </h2>
        {c.visits.length === 0 ? (
          <p class="empty">No visit is linked to this customer.</p>
        ) : (
          <ol class="timeline" id="visit-timeline">
            {c.visits.map((v) => (
              <li
                key={`${v.visitor_id}-${v.start}`}
                class={identified && v.start >= identified ? 'after' : 'before'}
              >
                <p class="timeline-head">
                  <strong>{formatTime(v.start)}</strong> · {v.channel} · {v.source || 'Direct / None'}
                  {v.utm_campaign ? ` · ${v.utm_campaign}` : ''} ·{' '}
                  <span class="muted">
                    visitor {v.visitor_id.slice(0, 12)},{' '}
                    {identified && v.start >= identified ? 'after identify' : 'before identify'}
                  </span>
                </p>
                <ul>
                  {[
                    ...v.pageviews.map((p) => ({ at: p.timestamp, text: `viewed ${p.path}` })),
                    ...v.events.map((e) => ({ at: e.timestamp, text: `event ${e.name}` })),
                  ]
                    .sort((a, b) => (a.at < b.at ? -1 : 1))
                    .map((step) => (
                      <li key={`${step.at}-${step.text}`}>
                        <span class="mono">{step.at.slice(11, 16)}</span> {step.text}
                      </li>
                    ))}
                </ul>
              </li>
            ))}
          </ol>
        )}
      </section>
    </>
  );
}
