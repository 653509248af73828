// Page-level states: loading, failures, not found. A failure says what happened in words a site owner can
// act on, never the API's internals. A panel's failure stays in its panel, named, with a Retry button, so
// one failing request never takes the rest of the page with it.
import type { ComponentChildren } from 'preact';
import { ApiError } from '../api/client.ts';

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return <output class="loading">{label}</output>;
}

export function describeError(error: Error): string {
  if (!(error instanceof ApiError)) return 'Something went wrong. Reload the page to try again.';
  if (error.status === 0) return error.message;
  if (error.status === 401) return 'Your session has ended. Sign in again.';
  if (error.status === 403) return 'You may not see this.';
  if (error.status === 404) return 'Not found.';
  if (error.status === 429) return 'Too many requests. Wait a moment and try again.';
  if (error.status >= 500) return 'The dashboard could not answer. Try again in a moment.';
  return error.message;
}

export function ErrorMessage(props: {
  error: Error;
  /** What failed to load, for a panel's own message ("Channels could not be loaded."). */
  what?: string;
  /** Asks again (the query's reload): shown as a Retry button. */
  onRetry?: () => void;
  children?: ComponentChildren;
}) {
  return (
    <div class="error" role="alert">
      <p>
        {props.what ? `${props.what} could not be loaded. ` : ''}
        {describeError(props.error)}
      </p>
      {props.onRetry && (
        <button type="button" class="retry" onClick={props.onRetry}>
          Retry
        </button>
      )}
      {props.children}
    </div>
  );
}

export function CenteredCard({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <main class="centered">
      <div class="card narrow">
        <p class="brand-line">
          <span class="logo" aria-hidden="true" /> Tally
        </p>
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}

export function NotFound() {
  return (
    <CenteredCard title="Page not found">
      <p>
        There is nothing at this address. <a href="/">Go to your projects</a>.
      </p>
    </CenteredCard>
  );
}
