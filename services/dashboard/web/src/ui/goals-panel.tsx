// Goals and funnels: conversions of the project's goals in the range and a funnel's steps, each defined here
// by those who may edit (a goal is a custom event name or a page path pattern; a funnel 2 to 8 of them in
// order).
import { useState } from 'preact/hooks';
import type {
  Funnel,
  FunnelResult,
  Funnels,
  Goal,
  GoalConversions,
  Goals,
  GoalTarget,
} from '../api/types.ts';
import { useQuery } from '../api/use-query.ts';
import { formatCount, formatPercent } from '../format.ts';
import { useTraffic } from '../views/traffic-context.ts';
import { CsvButton } from './csv-button.tsx';
import { Dialog } from './dialog.tsx';
import { ErrorMessage } from './messages.tsx';
import { Tabs } from './tabs.tsx';

const TABS = [
  { id: 'goals', label: 'Goals' },
  { id: 'funnels', label: 'Funnels' },
];

export function GoalsPanel() {
  const [tab, setTab] = useState('goals');
  return (
    <section class="card panel" aria-labelledby="goals-title" data-panel="goals">
      <div class="card-head">
        <h2 id="goals-title">Goals and funnels</h2>
        <Tabs tabs={TABS} current={tab} label="Goals and funnels" onSelect={setTab} />
      </div>
      <div role="tabpanel" aria-label={tab === 'goals' ? 'Goals' : 'Funnels'}>
        {tab === 'goals' ? <GoalsTab /> : <FunnelsTab />}
      </div>
    </section>
  );
}

function GoalsTab() {
  const { api, project, params, fileName } = useTraffic();
  const base = `/projects/${encodeURIComponent(project.id)}`;
  const conversions = useQuery<GoalConversions>(api, `${base}/traffic/goals`, params);
  const definitions = useQuery<Goals>(api, project.access.can_edit ? `${base}/goals` : null);
  const [adding, setAdding] = useState(false);
  const reload = () => {
    conversions.reload();
    definitions.reload();
  };
  if (conversions.error) return <ErrorMessage error={conversions.error} what="Goals" onRetry={reload} />;
  const rows = conversions.data?.rows ?? [];
  const max = Math.max(1, ...rows.map((r) => r.visitors));
  return (
    <>
      {conversions.data && rows.length === 0 ? (
        <p class="empty">
          No goals yet. A goal is a custom event (signup) or a page (/thank-you, /blog/*): its conversion rate
          is the share of visitors who reached it.
        </p>
      ) : (
        <table class={conversions.stale ? 'bars is-stale' : 'bars'}>
          <caption class="sr-only">Goal conversions</caption>
          <thead>
            <tr>
              <th scope="col" class="value-col">
                Goal
              </th>
              <th scope="col" class="num">
                Visitors
              </th>
              <th scope="col" class="num hide-narrow">
                Events
              </th>
              <th scope="col" class="num">
                Conversion
              </th>
              {definitions.data && (
                <th scope="col" class="sr-only-col">
                  <span class="sr-only">Delete</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row.goal}>
                <td class="value-col">
                  <span class="bar" style={{ width: `${(row.visitors / max) * 100}%` }} aria-hidden="true" />
                  <span class="value-text">{row.name}</span>
                </td>
                <td class="num">{formatCount(row.visitors)}</td>
                <td class="num hide-narrow">{formatCount(row.events)}</td>
                <td class="num">{formatPercent(row.conversion_rate)}</td>
                {definitions.data && (
                  <td class="num">
                    <DeleteButton
                      what={`goal ${row.name}`}
                      path={`${base}/goals/${encodeURIComponent(row.goal)}`}
                      onDone={reload}
                    />
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div class="card-foot">
        {project.access.can_edit && (
          <button type="button" class="link-button" onClick={() => setAdding(true)}>
            + Add goal
          </button>
        )}
        <CsvButton
          label="Goals"
          path={`${base}/traffic/goals`}
          params={params}
          fileName={fileName('goals')}
        />
      </div>
      <Dialog open={adding} title="Add a goal" onClose={() => setAdding(false)}>
        <GoalForm
          onSaved={() => {
            setAdding(false);
            reload();
          }}
        />
      </Dialog>
    </>
  );
}

function targetOf(kind: string, value: string): GoalTarget {
  return kind === 'event' ? { event_name: value } : { path: value };
}

function GoalForm({ onSaved }: { onSaved(goal: Goal): void }) {
  const { api, project } = useTraffic();
  const [error, setError] = useState<string | null>(null);
  return (
    <form
      class="stack"
      onSubmit={async (e) => {
        e.preventDefault();
        const form = new FormData(e.currentTarget as HTMLFormElement);
        const value = String(form.get('value') ?? '').trim();
        try {
          onSaved(
            await api.send<Goal>('POST', `/projects/${encodeURIComponent(project.id)}/goals`, {
              name: String(form.get('name') ?? '').trim() || value,
              ...targetOf(String(form.get('kind')), value),
            }),
          );
        } catch (err) {
          setError((err as Error).message);
        }
      }}
    >
      <TargetFields prefix="" />
      <label>
        <span>
          Name <span class="muted">(optional)</span>
        </span>
        <input name="name" maxLength={200} />
      </label>
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" class="primary">
        Add goal
      </button>
    </form>
  );
}

function TargetFields({ prefix, legend }: { prefix: string; legend?: string }) {
  const [kind, setKind] = useState('event');
  return (
    <fieldset class="target">
      {legend && <legend>{legend}</legend>}
      <label>
        Reached by
        <select name={`${prefix}kind`} value={kind} onChange={(e) => setKind(e.currentTarget.value)}>
          <option value="event">a custom event</option>
          <option value="page">a page view</option>
        </select>
      </label>
      <label>
        {kind === 'event' ? 'Event name' : 'Page path'}
        <input
          name={`${prefix}value`}
          required
          maxLength={kind === 'event' ? 256 : 4096}
          placeholder={kind === 'event' ? 'signup' : '/blog/*'}
        />
      </label>
    </fieldset>
  );
}

function DeleteButton(props: { what: string; path: string; onDone(): void }) {
  const { api } = useTraffic();
  return (
    <button
      type="button"
      class="icon-button"
      aria-label={`Delete ${props.what}`}
      title={`Delete ${props.what}`}
      onClick={async () => {
        if (!confirm(`Delete ${props.what}?`)) return;
        await api.send('DELETE', props.path).catch(() => undefined);
        props.onDone();
      }}
    >
      ×
    </button>
  );
}

function FunnelsTab() {
  const { api, project, params, fileName } = useTraffic();
  const base = `/projects/${encodeURIComponent(project.id)}`;
  const funnels = useQuery<Funnels>(api, `${base}/funnels`);
  const [chosen, setChosen] = useState<string | null>(null);
  const [adding, setAdding] = useState(false);
  const list = funnels.data?.funnels ?? [];
  const funnel = list.find((f) => f.id === chosen) ?? list[0];
  const result = useQuery<FunnelResult>(
    api,
    funnel ? `${base}/traffic/funnels/${encodeURIComponent(funnel.id)}` : null,
    params,
  );
  if (funnels.error) return <ErrorMessage error={funnels.error} what="Funnels" onRetry={funnels.reload} />;
  return (
    <>
      {funnels.data && list.length === 0 ? (
        <p class="empty">
          No funnels yet. A funnel is 2 to 8 goals in order (visit /pricing, then sign up): it shows how many
          visitors reach each step after the one before.
        </p>
      ) : (
        funnel && (
          <>
            <label class="field inline">
              <span class="field-label">Funnel</span>
              <select value={funnel.id} onChange={(e) => setChosen(e.currentTarget.value)}>
                {list.map((f) => (
                  <option key={f.id} value={f.id}>
                    {f.name}
                  </option>
                ))}
              </select>
            </label>
            {result.error ? (
              <ErrorMessage error={result.error} what={`Funnel ${funnel.name}`} onRetry={result.reload} />
            ) : (
              <FunnelSteps funnel={funnel} result={result.data} stale={result.stale} />
            )}
          </>
        )
      )}
      <div class="card-foot">
        {project.access.can_edit && (
          <>
            <button type="button" class="link-button" onClick={() => setAdding(true)}>
              + Add funnel
            </button>
            {funnel && (
              <DeleteButton
                what={`funnel ${funnel.name}`}
                path={`${base}/funnels/${encodeURIComponent(funnel.id)}`}
                onDone={() => {
                  setChosen(null);
                  funnels.reload();
                }}
              />
            )}
          </>
        )}
        {funnel && (
          <CsvButton
            label={`Funnel ${funnel.name}`}
            path={`${base}/traffic/funnels/${encodeURIComponent(funnel.id)}`}
            params={params}
            fileName={fileName(`funnel-${funnel.id}`)}
          />
        )}
      </div>
      <Dialog open={adding} title="Add a funnel" onClose={() => setAdding(false)}>
        <FunnelForm
          onSaved={(created) => {
            setAdding(false);
            setChosen(created.id);
            funnels.reload();
          }}
        />
      </Dialog>
    </>
  );
}

function FunnelSteps(props: { funnel: Funnel; result: FunnelResult | undefined; stale: boolean }) {
  const steps = props.result?.steps ?? [];
  const first = Math.max(1, steps[0]?.visitors ?? 0);
  return (
    <table class={props.stale ? 'bars is-stale' : 'bars'}>
      <caption class="sr-only">Steps of the funnel {props.funnel.name}</caption>
      <thead>
        <tr>
          <th scope="col" class="value-col">
            Step
          </th>
          <th scope="col" class="num">
            Visitors
          </th>
          <th scope="col" class="num hide-narrow">
            From previous
          </th>
          <th scope="col" class="num">
            Conversion
          </th>
        </tr>
      </thead>
      <tbody>
        {steps.map((step, i) => (
          <tr key={`${i}-${step.name}`}>
            <td class="value-col">
              <span class="bar" style={{ width: `${(step.visitors / first) * 100}%` }} aria-hidden="true" />
              <span class="value-text">
                {i + 1}. {step.name}
              </span>
            </td>
            <td class="num">{formatCount(step.visitors)}</td>
            <td class="num hide-narrow">{i === 0 ? '—' : formatPercent(step.step_conversion_rate)}</td>
            <td class="num">{formatPercent(step.conversion_rate)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function FunnelForm({ onSaved }: { onSaved(funnel: Funnel): void }) {
  const { api, project } = useTraffic();
  const [count, setCount] = useState(2);
  const [error, setError] = useState<string | null>(null);
  return (
    <form
      class="stack"
      onSubmit={async (e) => {
        e.preventDefault();
        const form = new FormData(e.currentTarget as HTMLFormElement);
        const steps = Array.from({ length: count }, (_, i) =>
          targetOf(String(form.get(`s${i}-kind`)), String(form.get(`s${i}-value`) ?? '').trim()),
        );
        try {
          onSaved(
            await api.send<Funnel>('POST', `/projects/${encodeURIComponent(project.id)}/funnels`, {
              name: String(form.get('name') ?? '').trim(),
              steps,
            }),
          );
        } catch (err) {
          setError((err as Error).message);
        }
      }}
    >
      <label>
        Name
        <input name="name" required maxLength={200} />
      </label>
      {Array.from({ length: count }, (_, i) => (
        <TargetFields key={i} prefix={`s${i}-`} legend={`Step ${i + 1}`} />
      ))}
      <div class="row">
        <button type="button" disabled={count >= 8} onClick={() => setCount(count + 1)}>
          + Step
        </button>
        <button type="button" disabled={count <= 2} onClick={() => setCount(count - 1)}>
          − Step
        </button>
      </div>
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" class="primary">
        Add funnel
      </button>
    </form>
  );
}
