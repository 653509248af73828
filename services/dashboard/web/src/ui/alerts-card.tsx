// The Health view's "Alerts" card (docs/alerts.md): the project's alert rules with their state, firing ones
// first with since when (the API's order), those that cannot be evaluated with why; for owners and admins
// a form to add a rule (kind, its threshold and fields, a member's email and/or a webhook) and a button to
// remove one. Reloaded every 30 seconds, like the view. Signed-in members only: the API does not list rules to read keys or share links.
import { useState } from 'preact/hooks';
import type { Api } from '../api/client.ts';
import type { AlertRule, AlertRules, Members } from '../api/types.ts';
import { useQuery } from '../api/use-query.ts';
import { formatTime } from '../views/revenue-state.ts';
import { ErrorMessage, Loading } from './messages.tsx';
import { useInterval } from './use-interval.ts';

const KINDS = [
  ['stalled', 'A record type stops landing', 'Minutes without a record'],
  ['dead_letters', 'Dead letters in an hour', 'More than this many'],
  ['traffic', 'Pageviews of an hour against a week before', 'Percent up or down'],
  ['mrr_churn', 'MRR churned in a UTC day', 'More than this amount'],
] as const;
type Kind = (typeof KINDS)[number][0];
const RECORD_TYPES = ['pageview', 'event', 'identify', 'revenue'];

function StateBadge({ rule }: { rule: AlertRule }) {
  const s = rule.state;
  const label =
    s.status === 'firing'
      ? `Firing since ${s.since ? formatTime(s.since) : '—'}`
      : s.status === 'ok'
        ? 'OK'
        : s.status === 'cannot_evaluate'
          ? 'Cannot evaluate'
          : 'Not evaluated yet';
  const css = s.status === 'firing' ? 'stalled' : s.status === 'ok' ? 'ok' : 'none';
  return <span class={`status status-${css}`}>{label}</span>;
}

const targets = (rule: AlertRule) => [
  ...rule.emails,
  ...(rule.webhook_url ? [new URL(rule.webhook_url).host] : []),
];

export function AlertsCard({ api, project, canEdit }: { api: Api; project: string; canEdit: boolean }) {
  const base = `/projects/${encodeURIComponent(project)}/alerts`;
  const rules = useQuery<AlertRules>(api, base);
  useInterval(() => rules.reload(), 30_000);
  const members = useQuery<Members>(api, canEdit ? `/projects/${encodeURIComponent(project)}/members` : null);
  const [kind, setKind] = useState<Kind>('stalled');
  const [error, setError] = useState<string | null>(null);
  const list = rules.data?.rules ?? [];
  return (
    <section class="card alerts-card" aria-labelledby="alerts-title">
      <h2 id="alerts-title">
        Alerts <span class="muted">by email and webhook, once per incident</span>
      </h2>
      {rules.error && <ErrorMessage error={rules.error} what="Alerts" onRetry={rules.reload} />}
      {!rules.data && !rules.error && <Loading />}
      {rules.data && list.length === 0 && (
        <p class="empty" id="alerts-none">
          No alert rules yet.
        </p>
      )}
      {list.length > 0 && (
        <ul class="alert-rules" id="alert-rules">
          {list.map((rule) => (
            <li
              key={rule.id}
              data-rule={rule.id}
              data-status={rule.state.status}
              class={`alert-${rule.state.status}`}
            >
              <div class="alert-head">
                <StateBadge rule={rule} />
                <span class="alert-description">{rule.description}</span>
                {canEdit && (
                  <button
                    type="button"
                    class="link-button"
                    aria-label={`Remove the alert: ${rule.description}`}
                    onClick={async () => {
                      if (!confirm(`Remove the alert "${rule.description}"?`)) return;
                      await api
                        .send('DELETE', `${base}/${encodeURIComponent(rule.id)}`)
                        .catch(() => undefined);
                      rules.reload();
                    }}
                  >
                    Remove
                  </button>
                )}
              </div>
              {rule.state.reason && rule.state.status !== 'ok' && (
                <p class="alert-reason">{rule.state.reason}</p>
              )}
              <p class="alert-targets muted">
                To {targets(rule).join(', ')}
                {rule.state.pending_deliveries > 0 &&
                  ` · ${rule.state.pending_deliveries} message${rule.state.pending_deliveries === 1 ? '' : 's'} not delivered yet${rule.state.last_delivery_error ? ` (${rule.state.last_delivery_error})` : ''}`}
              </p>
            </li>
          ))}
        </ul>
      )}
      {canEdit && (
        <form
          class="stack alert-form"
          onSubmit={async (e) => {
            e.preventDefault();
            const formElement = e.currentTarget as HTMLFormElement;
            const form = new FormData(formElement);
            const text = (name: string) => String(form.get(name) ?? '').trim();
            const email = text('email');
            const webhook = text('webhook');
            setError(null);
            try {
              await api.send('POST', base, {
                kind,
                threshold: Number(text('threshold')),
                ...(kind === 'stalled' ? { record_type: text('record_type') } : {}),
                ...(kind === 'traffic'
                  ? { direction: text('direction'), min_baseline: Number(text('min_baseline') || '20') }
                  : {}),
                ...(kind === 'mrr_churn' ? { currency: text('currency') || null } : {}),
                emails: email ? [email] : [],
                webhook_url: webhook || null,
              });
              formElement.reset();
              setKind('stalled');
              rules.reload();
            } catch (err) {
              setError((err as Error).message);
            }
          }}
        >
          <h3>New alert</h3>
          <label>
            <span>When</span>
            <select name="kind" value={kind} onChange={(e) => setKind(e.currentTarget.value as Kind)}>
              {KINDS.map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          <div class="row">
            {kind === 'stalled' && (
              <label class="field">
                <span class="field-label">Record type</span>
                <select name="record_type">
                  {RECORD_TYPES.map((t) => (
                    <option key={t}>{t}</option>
                  ))}
                </select>
              </label>
            )}
            {kind === 'traffic' && (
              <label class="field">
                <span class="field-label">Direction</span>
                <select name="direction">
                  <option value="spike">spike (up)</option>
                  <option value="drop">drop (down)</option>
                </select>
              </label>
            )}
            <label class="field">
              <span class="field-label">{KINDS.find((k) => k[0] === kind)?.[2]}</span>
              <input name="threshold" type="number" required min={0} step="any" inputMode="decimal" />
            </label>
            {kind === 'traffic' && (
              <label class="field">
                <span class="field-label">Least pageviews a week before</span>
                <input name="min_baseline" type="number" min={1} step={1} placeholder="20" />
              </label>
            )}
            {kind === 'mrr_churn' && (
              <label class="field">
                <span class="field-label">Currency (empty: each)</span>
                <input name="currency" maxLength={3} size={5} placeholder="USD" />
              </label>
            )}
          </div>
          <label>
            <span>
              Email <span class="muted">(a member)</span>
            </span>
            <select name="email">
              <option value="">—</option>
              {(members.data?.members ?? []).map((m) => (
                <option key={m.email} value={m.email}>
                  {m.email}
                </option>
              ))}
            </select>
          </label>
          <label>
            <span>
              Webhook <span class="muted">(an http(s) URL, Slack-compatible)</span>
            </span>
            <input
              name="webhook"
              type="url"
              maxLength={2048}
              placeholder="https://hooks.slack.com/services/…"
            />
          </label>
          {error && (
            <p class="form-error" role="alert" id="alert-form-error">
              {error}
            </p>
          )}
          <button type="submit" class="primary">
            Add alert
          </button>
        </form>
      )}
    </section>
  );
}
