// A share link's view, for anyone holding the link and signed out: what the link shows, a password prompt
// when it has one, then the project's views with the link's own credential (the link token, or the grant
// the password bought, kept for this tab only). Nothing of revenue is listed or requested unless the link's
// creator included it (`access.revenue`).

import { useMemo, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError, createApi } from '../api/client.ts';
import type { Project, SharedInfo, ShareGrant } from '../api/types.ts';
import { useQuery } from '../api/use-query.ts';
import { CenteredCard, ErrorMessage, Loading } from '../ui/messages.tsx';
import { Dashboard } from '../ui/shell.tsx';

const publicApi = createApi();
const grantKey = (token: string) => `tally.share-grant.${token}`;

function storedGrant(token: string): string | null {
  try {
    const saved = JSON.parse(sessionStorage.getItem(grantKey(token)) ?? 'null') as ShareGrant | null;
    if (saved && Date.parse(saved.expires_at) > Date.now()) return saved.grant;
  } catch {
    // storage refused or garbled: ask for the password again
  }
  return null;
}

function saveGrant(token: string, grant: ShareGrant | null) {
  try {
    if (grant) sessionStorage.setItem(grantKey(token), JSON.stringify(grant));
    else sessionStorage.removeItem(grantKey(token));
  } catch {
    // private mode without storage: the grant lives as long as the page
  }
}

export function SharedPage({ token, view }: { token: string; view?: string }) {
  const info = useQuery<SharedInfo>(publicApi, `/shared/${encodeURIComponent(token)}`);
  const [grant, setGrant] = useState(() => storedGrant(token));

  if (info.error) {
    return (
      <CenteredCard title="Shared dashboard">
        {info.error instanceof ApiError && info.error.status === 404 ? (
          <p>This link does not work: it was revoked, or it was not copied whole.</p>
        ) : (
          <ErrorMessage error={info.error} />
        )}
      </CenteredCard>
    );
  }
  if (!info.data) return <Loading />;
  if (info.data.password_required && !grant) {
    return (
      <PasswordPrompt
        token={token}
        name={info.data.name || info.data.project}
        onUnlock={(g) => {
          saveGrant(token, g);
          setGrant(g.grant);
        }}
      />
    );
  }
  return (
    <SharedDashboard
      token={token}
      credential={grant ?? token}
      info={info.data}
      viewId={view ?? ''}
      onDenied={() => {
        saveGrant(token, null);
        setGrant(null);
      }}
    />
  );
}

function SharedDashboard(props: {
  token: string;
  credential: string;
  info: SharedInfo;
  viewId: string;
  onDenied(): void;
}) {
  const api = useMemo(() => createApi(props.credential), [props.credential]);
  const project = useQuery<Project>(api, `/projects/${encodeURIComponent(props.info.project)}`);
  if (project.error) {
    const denied = project.error instanceof ApiError && project.error.status === 401;
    return (
      <CenteredCard title="Shared dashboard">
        <ErrorMessage error={project.error}>
          {denied && props.info.password_required && (
            <button type="button" onClick={props.onDenied}>
              Enter the password again
            </button>
          )}
        </ErrorMessage>
      </CenteredCard>
    );
  }
  if (!project.data) return <Loading />;
  return (
    <Dashboard
      api={api}
      project={project.data}
      base={`/share/${encodeURIComponent(props.token)}`}
      viewId={props.viewId}
      sharedName={props.info.name || props.info.project}
    />
  );
}

function PasswordPrompt(props: { token: string; name: string; onUnlock(grant: ShareGrant): void }) {
  const { url } = useLocation();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function submit(event: Event) {
    event.preventDefault();
    const password = String(new FormData(event.currentTarget as HTMLFormElement).get('password') ?? '');
    setBusy(true);
    setError(null);
    try {
      props.onUnlock(
        await publicApi.send<ShareGrant>('POST', `/shared/${encodeURIComponent(props.token)}/unlock`, {
          password,
        }),
      );
    } catch (e) {
      const status = e instanceof ApiError ? e.status : -1;
      setError(
        status === 401
          ? 'That is not the password of this link.'
          : status === 429
            ? 'Too many attempts. Wait a few minutes, then try again.'
            : 'Opening the link failed. Try again in a moment.',
      );
      setBusy(false);
    }
  }
  return (
    <CenteredCard title={props.name}>
      <p>This shared dashboard is protected by a password.</p>
      <form class="stack" onSubmit={submit} action={url}>
        <label>
          Password
          <input name="password" type="password" autocomplete="current-password" required autofocus />
        </label>
        {error && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Opening…' : 'Open the dashboard'}
        </button>
      </form>
    </CenteredCard>
  );
}
