// The sign-in page: email and password; on success the server sets the session cookie and the app goes on
// to the page that asked for sign-in.

import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError, createApi } from '../api/client.ts';
import type { SessionInfo } from '../api/types.ts';
import { CenteredCard } from '../ui/messages.tsx';
import { safeNext } from './navigation.ts';

const api = createApi();

export function SignInPage() {
  const { query, route } = useLocation();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(null);
    try {
      await api.send<SessionInfo>('POST', '/session', {
        email: String(form.get('email') ?? '').trim(),
        password: String(form.get('password') ?? ''),
      });
      route(safeNext(query.next), true);
    } catch (e) {
      const status = e instanceof ApiError ? e.status : -1;
      setError(
        status === 401 || status === 400
          ? 'The email or the password is wrong.'
          : status === 429
            ? 'Too many attempts. Wait a few minutes, then try again.'
            : 'Signing in failed. Try again in a moment.',
      );
      setBusy(false);
    }
  }

  return (
    <CenteredCard title="Sign in">
      <form class="stack" onSubmit={submit}>
        <label>
          Email
          <input name="email" type="email" autocomplete="username" required autofocus />
        </label>
        <label>
          Password
          <input name="password" type="password" autocomplete="current-password" required />
        </label>
        {error && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <p>
        <a href="/forgot-password">Forgot your password?</a>
      </p>
      <p class="hint">
        No account yet? A project's owner or admin invites you from its Settings, or an administrator adds you
        with <code>npx tally users add you@example.com</code>, which prints a link to set your password.
      </p>
    </CenteredCard>
  );
}
