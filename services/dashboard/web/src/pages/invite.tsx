// The page of an invitation link (`<dashboard>/invite#token=inv_…`, mailed by the server or passed on by
// the inviter): it says who invited whom to which project with which role, and accepts it, signed in by the
// answer. A new account chooses its password here; an existing account proves it is its own with its
// password. The token stays in the fragment (never sent in a request line) and leaves the address bar once read.

import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError, createApi } from '../api/client.ts';
import type { InvitationView, SessionInfo } from '../api/types.ts';
import { CenteredCard, Loading } from '../ui/messages.tsx';
import { MIN_PASSWORD, NewPasswordFields } from '../ui/new-password-fields.tsx';

const api = createApi();

const article = (role: string) => (role === 'admin' ? 'an' : 'a');

export function InvitePage() {
  const { route } = useLocation();
  const [token] = useState(() => {
    const found = new URLSearchParams(location.hash.slice(1)).get('token');
    if (found) history.replaceState(null, '', '/invite');
    return found;
  });
  const [view, setView] = useState<InvitationView | 'invalid' | 'failed' | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (!token) return;
    api
      .send<InvitationView>('POST', '/invitation', { token })
      .then(setView)
      .catch((e) => setView(e instanceof ApiError && e.status === 401 ? 'invalid' : 'failed'));
  }, [token]);

  if (!token || view === 'invalid') {
    return (
      <CenteredCard title="Invitation">
        <p>
          This invitation link is unknown, already used, revoked or expired (an invitation works once, for 7
          days). Ask whoever invited you for a new one.
        </p>
      </CenteredCard>
    );
  }
  if (view === 'failed') {
    return (
      <CenteredCard title="Invitation">
        <p>The invitation could not be read. Reload the page in a moment.</p>
      </CenteredCard>
    );
  }
  if (!view) return <Loading />;

  async function submit(event: Event) {
    event.preventDefault();
    if (!view || typeof view === 'string') return;
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const password = String(form.get('password') ?? '');
    if (!view.account_exists && password !== String(form.get('confirm') ?? '')) {
      setError('The two passwords differ.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await api.send<SessionInfo>('POST', '/invitation/accept', { token, password });
      route(`/projects/${encodeURIComponent(view.project)}`, true);
    } catch (e) {
      const status = e instanceof ApiError ? e.status : -1;
      const message = e instanceof Error ? e.message : '';
      setError(
        status === 401 && view.account_exists && /password/i.test(message)
          ? 'That is not the password of this account.'
          : status === 401
            ? 'This invitation was used, revoked or has expired meanwhile. Ask for a new one.'
            : status === 400
              ? `Choose a password of at least ${MIN_PASSWORD} characters.`
              : status === 429
                ? 'Too many attempts. Wait a little, then try again.'
                : 'Accepting failed. Try again in a moment.',
      );
      setBusy(false);
    }
  }

  return (
    <CenteredCard title={`Join ${view.project}`}>
      <p class="invitation-summary">
        <strong>{view.invited_by}</strong> invited <strong>{view.email}</strong> to the project{' '}
        <strong>{view.project}</strong> on Tally, as {article(view.role)} <strong>{view.role}</strong>.
      </p>
      <form class="stack" onSubmit={submit}>
        <input type="email" name="email" value={view.email} autocomplete="username" readOnly hidden />
        {view.account_exists ? (
          <label>
            Your Tally password
            <input name="password" type="password" autocomplete="current-password" required autofocus />
          </label>
        ) : (
          <NewPasswordFields label="Choose a password" />
        )}
        {error && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Joining…' : `Accept and open ${view.project}`}
        </button>
      </form>
      <p class="hint">This link works once, until {new Date(view.expires_at).toLocaleDateString()}.</p>
    </CenteredCard>
  );
}
