// Ingestion health: per record type, whether records are landing (a type that was landing and stopped is
// shown as stalled, at the top, so stale revenue figures are never mistaken for current ones), when the last
// one landed, and records per minute over the last hour; then the record log's consumer lag with the age of
// the oldest record not landed, dead letters, the requests the gateway refused for the project per hour by
// status, and what this deployment cannot tell. A consumer group that is stalled (records waiting and no
// batch committed for CONSUMER_STALL_MS) comes first of all, in red, with how long and why: nothing of any
// project lands behind it. Then, under npm start, ingestion held back (the gateway answering 503 while a
// consumer group is GATEWAY_MAX_CONSUMER_LAG records behind). Then records the warehouse lost (parts the engine detached as damaged) and what
// to do about them. On Kafka, a consumer group whose oldest record not landed nears its topic's retention
// (Kafka deletes it then, landed or not), and the topics' settings that differ from the configuration.
// The Alerts card (ui/alerts-card.tsx) lists the project's alert rules, firing ones first, for its
// signed-in members. Refreshed every 30 seconds.
import { useLocation } from 'preact-iso';
import type { Health } from '../api/types.ts';
import { useQuery } from '../api/use-query.ts';
import { formatCount, formatDuration } from '../format.ts';
import { useSignInOn } from '../pages/session.ts';
import { AlertsCard } from '../ui/alerts-card.tsx';
import { ErrorMessage, Loading } from '../ui/messages.tsx';
import { useInterval } from '../ui/use-interval.ts';
import { formatTime } from './revenue-state.ts';
import type { ViewProps } from './view-props.ts';

const STATUS = {
  ok: 'Landing',
  stalled: 'Stalled',
  idle: 'Idle for a day or more',
  none: 'Never received',
} as const;

const minutes = (n: number) => `${n} minute${n === 1 ? '' : 's'}`;

/** What each refusal status means to whoever sends records (docs/api.md). */
const REFUSAL = {
  400: 'invalid record',
  403: 'refused token or origin',
  408: 'request too slow',
  413: 'body too large',
  415: 'wrong content type',
  429: 'rate limited',
  503: 'log unavailable or overloaded',
} as Record<number, string | undefined>;

/** The refusals table: one row per hour that had any (newest first), one column per status seen. */
function Refusals({ refused }: { refused: NonNullable<Health['refused']> }) {
  if (refused.total === 0) {
    return (
      <p class="empty" id="refusals-none">
        None in the last 24 hours.
      </p>
    );
  }
  const statuses = refused.by_status.map((s) => s.status);
  const hours = [...new Set(refused.hours.map((h) => h.hour))].sort().reverse();
  const cell = (hour: string, status: number) =>
    refused.hours.find((h) => h.hour === hour && h.status === status)?.count ?? 0;
  const totals = hours.map((hour) => statuses.reduce((sum, s) => sum + cell(hour, s), 0));
  const max = Math.max(1, ...totals);
  return (
    <div class="table-scroll">
      <table class="plain bars" id="refusals">
        <thead>
          <tr>
            <th scope="col">Hour (UTC)</th>
            {statuses.map((s) => (
              <th scope="col" class="num" key={s} title={REFUSAL[s]}>
                {s}
              </th>
            ))}
            <th scope="col" class="value-col">
              All
            </th>
          </tr>
        </thead>
        <tbody>
          {hours.map((hour, i) => (
            <tr key={hour} data-hour={hour}>
              <th scope="row">{hour.slice(0, 13).replace('T', ' ')}:00</th>
              {statuses.map((s) => (
                <td class="num" key={s} data-status={s}>
                  {formatCount(cell(hour, s))}
                </td>
              ))}
              <td class="value-col">
                <span class="bar refusal-bar" style={{ width: `${((totals[i] ?? 0) / max) * 100}%` }} />
                <span class="row-filter">{formatCount(totals[i] ?? 0)}</span>
              </td>
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr>
            <th scope="row">24 hours</th>
            {refused.by_status.map((s) => (
              <td class="num" key={s.status} data-status-total={s.status}>
                {formatCount(s.count)}
              </td>
            ))}
            <td class="value-col" id="refusals-total">
              {formatCount(refused.total)}
            </td>
          </tr>
        </tfoot>
      </table>
    </div>
  );
}

export function HealthView({ api, project }: ViewProps) {
  const { query, route } = useLocation();
  const stall = Number.parseInt(query.stall ?? '', 10);
  const health = useQuery<Health>(api, `/projects/${encodeURIComponent(project.id)}/health`, {
    ...(stall >= 1 && stall <= 1440 ? { stall_minutes: stall } : {}),
  });
  useSignInOn(api.kind === 'session' ? health.error : undefined, route);
  useInterval(() => health.reload(), 30_000);
  if (health.error) return <ErrorMessage error={health.error} what="Health" onRetry={health.reload} />;
  if (!health.data) return <Loading />;
  const h = health.data;
  const stalled = h.types.filter((t) => t.status === 'stalled');
  const stalledGroups = (h.consumers ?? []).filter((c) => c.status === 'stalled');
  const nearRetention = (h.consumer_groups ?? []).filter((g) => g.near_retention);
  const mismatches = h.log_settings?.mismatches ?? [];
  return (
    <>
      {stalledGroups.length > 0 && (
        <div class="error" role="alert" id="consumers-alert">
          {stalledGroups.map((c) => (
            <p key={c.group} data-group={c.group}>
              Consumer group <strong>{c.group}</strong> stalled for {formatDuration(c.stalled_seconds)}:{' '}
              {c.reason}. Nothing behind its {formatCount(c.lag)} waiting records lands, in any project.
            </p>
          ))}
        </div>
      )}
      {h.ingestion_held_back && (
        <div class="error" role="alert" id="ingestion-held-back">
          <p>
            Ingestion held back for {formatDuration(h.ingestion_held_back.held_seconds)}: consumer group{' '}
            <strong>{h.ingestion_held_back.group}</strong> has {formatCount(h.ingestion_held_back.lag)}{' '}
            records waiting (the bound, GATEWAY_MAX_CONSUMER_LAG, is{' '}
            {formatCount(h.ingestion_held_back.max_lag)}). The gateway answers every request 503 with
            Retry-After until fewer than {formatCount(h.ingestion_held_back.reopens_below)} wait; clients (the
            tracker, the SDKs) send again after it, and every record it acknowledged lands.
          </p>
        </div>
      )}
      {h.lost_records && (
        <div class="error" role="alert" id="health-lost-records">
          <p>
            The warehouse lost records: the engine found {h.lost_records.parts.length} damaged part
            {h.lost_records.parts.length === 1 ? '' : 's'} and set{' '}
            {h.lost_records.parts.length === 1 ? 'it' : 'them'} aside (
            {h.lost_records.parts.map((p) => `${p.table} ${p.part}`).join(', ')}). Every figure is missing
            their records until they are landed again: {h.lost_records.action}.
          </p>
        </div>
      )}
      {nearRetention.length > 0 && (
        <div class="error" role="alert" id="retention-alert">
          {nearRetention.map((g) => (
            <p key={`${g.group}-${g.topic}`} data-group={g.group} data-topic={g.topic}>
              Consumer group <strong>{g.group}</strong> has {g.topic} records not landed for{' '}
              {formatDuration(g.oldest_age_seconds)}: Kafka deletes them, landed or not, once older than{' '}
              {formatDuration(g.retention_seconds)} (the topic's retention.ms). Start or mend the consumer
              before then.
            </p>
          ))}
        </div>
      )}
      {mismatches.length > 0 && (
        <div class="error" role="alert" id="topic-settings-alert">
          <p>
            Kafka topics differ from the configuration (Tally does not change an existing topic: alter the
            topic, or the setting):
          </p>
          <ul class="warnings">
            {mismatches.map((m) => (
              <li key={`${m.topic}-${m.setting}`} data-topic={m.topic} data-setting={m.setting}>
                {m.topic}: {m.setting} is {m.actual}, {m.configured_by} says {m.expected}
              </li>
            ))}
          </ul>
        </div>
      )}
      {stalled.length > 0 ? (
        <div class="error" role="alert" id="health-alert">
          <p>
            {stalled.map((t) => `${t.type} records (none for ${t.minutes_since_last} min)`).join(' and ')}{' '}
            stopped landing, past the threshold of {minutes(h.stall_minutes)}. Figures built on them may be
            stale.
          </p>
        </div>
      ) : (
        <p class="notice ok" id="health-ok">
          No record type has stalled (threshold: {minutes(h.stall_minutes)} without records).
        </p>
      )}
      {api.kind === 'session' && (
        <AlertsCard api={api} project={project.id} canEdit={project.access.can_edit} />
      )}
      <section class="card" aria-labelledby="landing-title">
        <h2 id="landing-title">
          Records landed <span class="muted">per type, last 60 minutes</span>
        </h2>
        <div class="table-scroll">
          <table class="plain figures-table" id="health-table">
            <thead>
              <tr>
                <th scope="col">Type</th>
                <th scope="col">Status</th>
                <th scope="col">Last record</th>
                <th scope="col" class="num">
                  Last hour
                </th>
                <th scope="col">Per minute</th>
              </tr>
            </thead>
            <tbody>
              {h.types.map((t) => {
                const max = Math.max(1, ...t.per_minute);
                return (
                  <tr key={t.type} class={`health-${t.status}`}>
                    <th scope="row">{t.type}</th>
                    <td>
                      <span class={`status status-${t.status}`}>{STATUS[t.status]}</span>
                    </td>
                    <td>
                      {t.last_received_at
                        ? `${formatTime(t.last_received_at)} (${t.minutes_since_last} min ago)`
                        : '—'}
                    </td>
                    <td class="num">{formatCount(t.landed_last_hour)}</td>
                    <td>
                      <span class="spark" role="img" aria-label={`${t.type} per minute over the last hour`}>
                        {t.per_minute.map((n, i) => (
                          <span
                            key={i}
                            style={{ height: `${n === 0 ? 0 : Math.max(8, (n / max) * 100)}%` }}
                          />
                        ))}
                      </span>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
        <p class="footnote">
          Updated {formatTime(h.generated_at)}. A record counts in the minute the gateway received it, once it
          has landed in the warehouse.
        </p>
      </section>
      <div class="panels">
        <section class="card" aria-labelledby="dead-title">
          <h2 id="dead-title">Set aside as undeliverable</h2>
          {h.dead_letters === null ? (
            <p class="empty">Not available here.</p>
          ) : h.dead_letters.count === 0 ? (
            <p class="empty" id="dead-letters-none">
              None.
            </p>
          ) : (
            <div class="table-scroll">
              <table class="plain" id="dead-letters">
                <thead>
                  <tr>
                    <th scope="col">Type</th>
                    <th scope="col">Reason</th>
                    <th scope="col" class="num">
                      Records
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {h.dead_letters.by_reason.map((r) => (
                    <tr key={`${r.type}-${r.error_code}`}>
                      <td>{r.type}</td>
                      <td class="mono">{r.error_code}</td>
                      <td class="num">{formatCount(r.count)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <p class="footnote">
            <code>tally dead-letters list</code> shows them; <code>replay</code> lands them again once mended.
          </p>
        </section>
        <section class="card" aria-labelledby="lag-title">
          <h2 id="lag-title">Consumer lag</h2>
          {h.consumer_groups === null ? (
            <p class="empty">Not available here.</p>
          ) : (
            <>
              <p
                id="oldest-not-landed"
                class={(h.oldest_not_landed?.age_seconds ?? 0) >= h.stall_minutes * 60 ? 'behind' : ''}
              >
                {h.oldest_not_landed
                  ? `Oldest record not landed: ${formatDuration(h.oldest_not_landed.age_seconds)} old (${h.oldest_not_landed.topic}, group ${h.oldest_not_landed.group}).`
                  : 'Every record in the log has landed.'}
              </p>
              {h.consumers && h.consumers.length > 0 && (
                <div class="table-scroll">
                  <table class="plain" id="consumer-progress">
                    <thead>
                      <tr>
                        <th scope="col">Group</th>
                        <th scope="col">Status</th>
                        <th scope="col" class="num">
                          Waiting
                        </th>
                      </tr>
                    </thead>
                    <tbody>
                      {h.consumers.map((c) => (
                        <tr key={c.group} data-group={c.group} class={`health-${c.status}`}>
                          <td>{c.group}</td>
                          <td>
                            <span class={`status status-${c.status}`}>
                              {c.status === 'stalled'
                                ? `Stalled ${formatDuration(c.stalled_seconds)}`
                                : 'Landing'}
                            </span>
                          </td>
                          <td class="num">{formatCount(c.lag)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
              <div class="table-scroll">
                <table class="plain" id="consumer-lag">
                  <thead>
                    <tr>
                      <th scope="col">Group</th>
                      <th scope="col">Type</th>
                      <th scope="col" class="num">
                        Not yet landed
                      </th>
                      <th scope="col" class="num">
                        Oldest
                      </th>
                      <th scope="col" class="num">
                        Kept for
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {h.consumer_groups.map((g) => (
                      <tr key={`${g.group}-${g.topic}`} data-group={g.group} data-topic={g.topic}>
                        <td>{g.group}</td>
                        <td>{g.topic}</td>
                        <td class="num">{formatCount(g.lag)}</td>
                        <td class={g.near_retention ? 'num warning-text' : 'num'}>
                          {formatDuration(g.oldest_age_seconds)}
                        </td>
                        <td class="num">{formatDuration(g.retention_seconds)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </>
          )}
          <p class="footnote">Of the whole record log: every project's records.</p>
        </section>
        <section class="card" aria-labelledby="refused-title">
          <h2 id="refused-title">
            Refused by the gateway <span class="muted">per hour and status, last 24 hours</span>
          </h2>
          {h.refused === null ? <p class="empty">Not available here.</p> : <Refusals refused={h.refused} />}
          <p class="footnote">
            Requests with this project's token. A 401 (missing or unknown token) cannot be told to belong to a
            project and is not counted here.
          </p>
        </section>
      </div>
      {h.unavailable.length > 0 && (
        <section class="card" aria-labelledby="unavailable-title">
          <h2 id="unavailable-title">Not shown</h2>
          <ul id="health-unavailable">
            {h.unavailable.map((u) => (
              <li key={u}>{u}</li>
            ))}
          </ul>
        </section>
      )}
    </>
  );
}
