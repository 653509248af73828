// "Forgot your password?": the server mails the email's account a link that sets a new password (when it
// sends email at all), answering the same whether the account exists or not, and this page says which.

import { useState } from 'preact/hooks';
import { ApiError, createApi } from '../api/client.ts';
import { CenteredCard } from '../ui/messages.tsx';

const api = createApi();

export function ForgotPasswordPage() {
  const [done, setDone] = useState<{ email: string; emailed: boolean } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  if (done) {
    return (
      <CenteredCard title="Forgot your password?">
        {done.emailed ? (
          <output class="reset-answer">
            If <strong>{done.email}</strong> has an account, a link that sets a new password is on its way to
            it. The link works once, for 7 days.
          </output>
        ) : (
          <output class="reset-answer">
            This server sends no email. Ask an administrator to run{' '}
            <code>npx tally users link {done.email}</code>, which prints a link that sets a new password.
          </output>
        )}
        <p>
          <a href="/login">Back to sign-in</a>
        </p>
      </CenteredCard>
    );
  }

  async function submit(event: Event) {
    event.preventDefault();
    const email = String(new FormData(event.currentTarget as HTMLFormElement).get('email') ?? '').trim();
    setBusy(true);
    setError(null);
    try {
      const answer = await api.send<{ emailed: boolean }>('POST', '/password-reset', { email });
      setDone({ email, emailed: answer.emailed });
    } catch (e) {
      setError(
        e instanceof ApiError && e.status === 429
          ? 'Too many attempts. Wait a few minutes, then try again.'
          : 'The request failed. Try again in a moment.',
      );
      setBusy(false);
    }
  }

  return (
    <CenteredCard title="Forgot your password?">
      <form class="stack" onSubmit={submit}>
        <label>
          Email
          <input name="email" type="email" autocomplete="username" required autofocus />
        </label>
        {error && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Sending…' : 'Send me a link'}
        </button>
      </form>
      <p>
        <a href="/login">Back to sign-in</a>
      </p>
    </CenteredCard>
  );
}
