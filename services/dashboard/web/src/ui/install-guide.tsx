// How to install the tracker (an empty project's traffic view, and the settings), with a public token of the
// project. Tokens are stored hashed, so an existing one is known only by its first characters: a snippet
// never carries such a prefix (pasted into a site it would count nothing, silently). The snippets carry the
// whole token only right after one is created here, shown once; otherwise a placeholder, marked, and the
// way to make a new one. The guide checks every 10 seconds whether the first records arrived.
import { useState } from 'preact/hooks';
import type { Api } from '../api/client.ts';
import type { CreatedToken, Install, Project } from '../api/types.ts';
import { useInterval } from './use-interval.ts';

/** What the snippets carry when the whole token is not known. */
export const TOKEN_PLACEHOLDER = 'YOUR_PUBLIC_TOKEN';

export function InstallGuide(props: { api: Api; project: Project; install: Install; onCheck?(): void }) {
  const [created, setCreated] = useState<CreatedToken | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useInterval(() => props.onCheck?.(), 10_000);
  const token = created?.token ?? TOKEN_PLACEHOLDER;
  const endpoint = props.install.gateway_url;
  const existing = props.install.public_tokens;
  // The script sends to the origin it was loaded from: no data-endpoint needed.
  const scriptTag = `<script defer src="${endpoint}/tally.js" data-token="${token}"></script>`;
  const npm = `import { init } from '@tally/core';\n\ninit({ token: '${token}', endpoint: '${endpoint}' });`;
  const create = async () => {
    setBusy(true);
    setError(null);
    try {
      setCreated(
        await props.api.send<CreatedToken>(
          'POST',
          `/projects/${encodeURIComponent(props.project.id)}/public-tokens`,
        ),
      );
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="card install" aria-labelledby="install-title">
      <h2 id="install-title">Install the tracker on {props.project.id}</h2>
      {props.install.has_data ? (
        <p>Add the tracker to every page you want counted.</p>
      ) : (
        <p>
          No pageview or event has reached this project yet. Add the tracker to your site; the figures appear
          here as soon as the first pageview lands.
        </p>
      )}
      <h3>1. A public token</h3>
      {created ? (
        <p class="notice" id="new-token">
          Your new token, shown only now (the snippets below carry it):{' '}
          <code class="token">{created.token}</code>
        </p>
      ) : (
        <>
          {existing.length > 0 ? (
            <p id="token-hidden">
              This project has {existing.length === 1 ? 'a public token' : 'public tokens'} starting{' '}
              <code>{existing.map((t) => t.hint).join(', ')}</code>. Tally keeps only a hash of each token, so
              the whole token cannot be shown again, and the snippets below show{' '}
              <code>{TOKEN_PLACEHOLDER}</code> in its place. Paste in the token you saved when it was created,
              or create a new one here (the old one keeps working).
            </p>
          ) : (
            <p id="token-hidden">
              This project has no public token yet: create one, and the snippets below will carry it.
            </p>
          )}
          {props.project.access.can_edit && (
            <button type="button" disabled={busy} onClick={create}>
              {existing.length > 0 ? 'Create a new public token' : 'Create a public token'}
            </button>
          )}
          {error && (
            <p class="form-error" role="alert">
              {error}
            </p>
          )}
          <p class="hint">
            Or on the server: <code>npx tally tokens create --project {props.project.id} --kind public</code>
          </p>
        </>
      )}
      <h3>2. The script tag</h3>
      <p>
        In every page's <code>&lt;head&gt;</code>: Tally's gateway at <code>{endpoint}</code> serves the
        script, which sends to the same address (set <code>GATEWAY_PUBLIC_URL</code> when browsers reach it at
        another one).
      </p>
      <Snippet text={scriptTag} label="Script tag" placeholder={TOKEN_PLACEHOLDER} />
      <p>Or from a bundled application:</p>
      <Snippet text={npm} label="@tally/core" placeholder={TOKEN_PLACEHOLDER} />
      {!props.install.has_data && (
        <>
          <output class="hint">Waiting for the first pageview…</output>
          <p class="hint">
            Trying it on your own machine? A page on <code>localhost</code>, <code>127.0.0.1</code> or a{' '}
            <code>file:</code> page sends nothing unless the tag has <code>data-allow-localhost</code> (
            <code>allowLocalhost: true</code> with <code>@tally/core</code>).
          </p>
        </>
      )}
    </section>
  );
}

/** A block of code with a Copy button; `placeholder`, where it occurs, is marked as the part to replace. */
export function Snippet({ text, label, placeholder }: { text: string; label: string; placeholder?: string }) {
  const [copied, setCopied] = useState(false);
  const parts = placeholder ? text.split(placeholder) : [text];
  return (
    <div class="snippet">
      <pre>
        <code>
          {parts.map((part, i) => (
            <span key={i}>
              {part}
              {i < parts.length - 1 && (
                <mark class="placeholder" title="Replace with your token">
                  {placeholder}
                </mark>
              )}
            </span>
          ))}
        </code>
      </pre>
      <button
        type="button"
        aria-label={`Copy ${label}`}
        onClick={() =>
          navigator.clipboard?.writeText(text).then(
            () => setCopied(true),
            () => setCopied(false),
          )
        }
      >
        {copied ? 'Copied' : 'Copy'}
      </button>
    </div>
  );
}
