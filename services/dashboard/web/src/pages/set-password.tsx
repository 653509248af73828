// The page of a sign-in link (`tally users add` prints `<dashboard>/set-password#token=link_…`): the new user sets
// a password and is signed in. The token travels in the fragment, which browsers never send to a server, so
// it stays out of access logs and Referer headers; it is removed from the address bar once read.

import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError, createApi } from '../api/client.ts';
import type { SessionInfo } from '../api/types.ts';
import { CenteredCard } from '../ui/messages.tsx';
import { MIN_PASSWORD, NewPasswordFields } from '../ui/new-password-fields.tsx';

const api = createApi();

function readToken(): string | null {
  const fromHash = new URLSearchParams(location.hash.slice(1)).get('token');
  const fromQuery = new URLSearchParams(location.search).get('token');
  return fromHash ?? fromQuery;
}

export function SetPasswordPage() {
  const { route } = useLocation();
  const [token] = useState(() => {
    const found = readToken();
    if (found) history.replaceState(null, '', '/set-password');
    return found;
  });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  if (!token) {
    return (
      <CenteredCard title="Set your password">
        <p>
          This page needs the whole link that <code>tally users add</code> printed. Ask for a new one with{' '}
          <code>npx tally users link you@example.com</code>.
        </p>
      </CenteredCard>
    );
  }

  async function submit(event: Event) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const password = String(form.get('password') ?? '');
    if (password !== String(form.get('confirm') ?? '')) {
      setError('The two passwords differ.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await api.send<SessionInfo>('POST', '/password', { token, password });
      route('/', true);
    } catch (e) {
      const status = e instanceof ApiError ? e.status : -1;
      setError(
        status === 401 || status === 404
          ? 'This link has expired or was already used. Ask for a new one.'
          : status === 400
            ? `Choose a password of at least ${MIN_PASSWORD} characters.`
            : status === 429
              ? 'Too many attempts. Wait a few minutes, then try again.'
              : 'Setting the password failed. Try again in a moment.',
      );
      setBusy(false);
    }
  }

  return (
    <CenteredCard title="Set your password">
      <form class="stack" onSubmit={submit}>
        <NewPasswordFields label="New password" />
        {error && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Saving…' : 'Set password and sign in'}
        </button>
      </form>
    </CenteredCard>
  );
}
