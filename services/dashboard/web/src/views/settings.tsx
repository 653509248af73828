// A project's settings for its signed-in members: each member's own scheduled email reports (weekly,
// monthly); for owners and admins also its time zone (days are counted in it), its members and invitations
// (settings-members.tsx), its share links, and
// how to install the tracker (install-guide.tsx: never with a token's prefix in a snippet). Loaded only when
// opened; every part fits a phone's width.
import { useState } from 'preact/hooks';
import type { CreatedShare, Install, Project, ReportSubscription, Shares } from '../api/types.ts';
import { useQuery } from '../api/use-query.ts';
import { InstallGuide, Snippet } from '../ui/install-guide.tsx';
import { ErrorMessage, Loading } from '../ui/messages.tsx';
import { MembersCard } from './settings-members.tsx';
import type { ViewProps } from './view-props.ts';

export function SettingsView({ api, project, user }: ViewProps) {
  const base = `/projects/${encodeURIComponent(project.id)}`;
  const manages = project.access.can_edit;
  const install = useQuery<Install>(api, manages ? `${base}/install` : null);
  return (
    <div class="settings">
      {!manages && (
        <p class="notice viewer-notice">
          You are a viewer of <strong>{project.id}</strong>: you read its figures and choose your own email
          reports. Its owners and admins change its settings, share links and members.
        </p>
      )}
      {manages && <TimeZoneForm api={api} project={project} />}
      <EmailReports api={api} base={base} />
      {manages && <MembersCard api={api} project={project} user={user} />}
      {manages && <ShareLinks api={api} base={base} />}
      {manages &&
        (install.error ? (
          <ErrorMessage error={install.error} what="The install guide" onRetry={install.reload} />
        ) : install.data ? (
          <InstallGuide api={api} project={project} install={install.data} />
        ) : (
          <Loading />
        ))}
    </div>
  );
}

function zones(): string[] {
  try {
    return (Intl as unknown as { supportedValuesOf(key: string): string[] }).supportedValuesOf('timeZone');
  } catch {
    return [];
  }
}

function TimeZoneForm({ api, project }: Pick<ViewProps, 'api' | 'project'>) {
  const [message, setMessage] = useState<string | null>(null);
  return (
    <section class="card" aria-labelledby="tz-title">
      <h2 id="tz-title">Time zone</h2>
      <p>
        Days, weeks and months of the traffic figures are counted in the project's time zone, now{' '}
        <strong>{project.time_zone}</strong>.
      </p>
      <form
        class="row"
        onSubmit={async (e) => {
          e.preventDefault();
          const zone = String(new FormData(e.currentTarget as HTMLFormElement).get('zone') ?? '').trim();
          try {
            const saved = await api.send<Project>('PATCH', `/projects/${encodeURIComponent(project.id)}`, {
              time_zone: zone,
            });
            setMessage(`Saved: ${saved.time_zone}. Reload to see the figures in it.`);
          } catch (err) {
            setMessage((err as Error).message);
          }
        }}
      >
        <label class="field">
          <span class="field-label">Time zone</span>
          <input name="zone" list="zones" defaultValue={project.time_zone} required maxLength={64} />
        </label>
        <datalist id="zones">
          {zones().map((z) => (
            <option key={z} value={z} />
          ))}
        </datalist>
        <button type="submit">Save</button>
      </form>
      {message && <output>{message}</output>}
    </section>
  );
}

function EmailReports({ api, base }: { api: ViewProps['api']; base: string }) {
  const current = useQuery<ReportSubscription>(api, `${base}/report-subscription`);
  const [message, setMessage] = useState<string | null>(null);
  if (current.error)
    return <ErrorMessage error={current.error} what="Your email reports" onRetry={current.reload} />;
  if (!current.data) return <Loading />;
  const choice = current.data;
  return (
    <section class="card" aria-labelledby="reports-title">
      <h2 id="reports-title">Email reports</h2>
      <p>
        Your own summary of this project by email: visitors, visits and pageviews against the period before,
        top pages and sources. Weekly on Monday at 08:00, monthly on the first at 08:00, in the project's time
        zone.
      </p>
      <form
        class="row"
        onSubmit={async (e) => {
          e.preventDefault();
          const form = new FormData(e.currentTarget as HTMLFormElement);
          try {
            const saved = await api.send<ReportSubscription>('PATCH', `${base}/report-subscription`, {
              weekly: form.get('weekly') === 'on',
              monthly: form.get('monthly') === 'on',
            });
            const kinds = [saved.weekly && 'weekly', saved.monthly && 'monthly'].filter(Boolean);
            setMessage(
              kinds.length ? `Saved: you get the ${kinds.join(' and ')} report.` : 'Saved: no email reports.',
            );
          } catch (err) {
            setMessage((err as Error).message);
          }
        }}
      >
        <label class="check">
          <input type="checkbox" name="weekly" defaultChecked={choice.weekly} /> Weekly
        </label>
        <label class="check">
          <input type="checkbox" name="monthly" defaultChecked={choice.monthly} /> Monthly
        </label>
        <button type="submit">Save</button>
      </form>
      {message && <output>{message}</output>}
    </section>
  );
}

function ShareLinks({ api, base }: { api: ViewProps['api']; base: string }) {
  const shares = useQuery<Shares>(api, `${base}/shares`);
  // Every link made on this page stays here until the page is left: the server keeps only its hash, so
  // a second link must not push the first one's URL out of sight before it was copied.
  const [created, setCreated] = useState<CreatedShare[]>([]);
  const [error, setError] = useState<string | null>(null);
  return (
    <section class="card" aria-labelledby="shares-title">
      <h2 id="shares-title">Share links</h2>
      <p>
        A share link shows this project's dashboard, read-only, to anyone who has it (and its password, if it
        has one). Revenue stays hidden unless you include it.
      </p>
      {shares.error && <ErrorMessage error={shares.error} what="Share links" onRetry={shares.reload} />}
      {shares.data && shares.data.shares.length > 0 && (
        // Six columns do not fit a phone: the table scrolls inside the card, never the page.
        <div class="table-scroll">
          <table class="plain">
            <caption class="sr-only">Share links</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Link</th>
                <th scope="col">Password</th>
                <th scope="col">Revenue</th>
                <th scope="col">Embeddable on</th>
                <th scope="col">
                  <span class="sr-only">Revoke</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {shares.data.shares.map((s) => (
                <tr key={s.id}>
                  <td>{s.name || '—'}</td>
                  <td>
                    <code>{s.hint}</code>
                  </td>
                  <td>{s.password_protected ? 'yes' : 'no'}</td>
                  <td>{s.include_revenue ? 'shown' : 'hidden'}</td>
                  <td>{s.embed_origins.join(', ') || '—'}</td>
                  <td>
                    <button
                      type="button"
                      class="link-button"
                      onClick={async () => {
                        if (!confirm(`Revoke the share link ${s.name || s.hint}? It stops working at once.`))
                          return;
                        await api
                          .send('DELETE', `${base}/shares/${encodeURIComponent(s.id)}`)
                          .catch(() => undefined);
                        shares.reload();
                      }}
                    >
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {created.length > 0 && (
        <output class="notice created-shares">
          <p>
            {created.length === 1 ? 'The new link' : 'The new links'} (Tally keeps only a hash of each: copy
            it now, it cannot be shown again once you leave this page):
          </p>
          {created.map((c) => (
            <div key={c.share.id}>
              <strong>{c.share.name || c.share.hint}</strong>
              <Snippet text={c.url} label={`share link ${c.share.name || c.share.hint}`} />
            </div>
          ))}
        </output>
      )}
      <form
        class="stack share-form"
        onSubmit={async (e) => {
          e.preventDefault();
          const formElement = e.currentTarget as HTMLFormElement;
          const form = new FormData(formElement);
          const password = String(form.get('password') ?? '');
          const origins = String(form.get('origins') ?? '')
            .split(/[\s,]+/)
            .filter(Boolean);
          setError(null);
          try {
            const made = await api.send<CreatedShare>('POST', `${base}/shares`, {
              name: String(form.get('name') ?? '').trim(),
              ...(password ? { password } : {}),
              include_revenue: form.get('revenue') === 'on',
              embed_origins: origins,
            });
            setCreated((earlier) => [made, ...earlier]);
            formElement.reset();
            shares.reload();
          } catch (err) {
            setError((err as Error).message);
          }
        }}
      >
        <h3>New share link</h3>
        <label>
          <span>
            Name <span class="muted">(optional)</span>
          </span>
          <input name="name" maxLength={200} />
        </label>
        <label>
          <span>
            Password <span class="muted">(optional)</span>
          </span>
          <input name="password" type="password" autocomplete="new-password" maxLength={1024} />
        </label>
        <label class="check">
          <input name="revenue" type="checkbox" /> Include revenue figures
        </label>
        <label>
          <span>
            May be embedded (iframe) on{' '}
            <span class="muted">(origins such as https://blog.example, optional)</span>
          </span>
          <textarea name="origins" rows={2} />
        </label>
        {error && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="primary">
          Create share link
        </button>
      </form>
    </section>
  );
}
