// What an empty project shows: how to install the tracker, with a public token of the project. Tokens are
// stored hashed, so an existing one is known only by its first characters; a new one can be made here and is
// shown once. The guide checks every 10 seconds whether the first records arrived.
import { useState } from 'preact/hooks';
import type { Api } from '../api/client.ts';
import type { CreatedToken, Install, Project } from '../api/types.ts';
import { useInterval } from './use-interval.ts';

export function InstallGuide(props: { api: Api; project: Project; install: Install; onCheck?(): void }) {
  const [created, setCreated] = useState<CreatedToken | null>(null);
  const [error, setError] = useState<string | null>(null);
  useInterval(() => props.onCheck?.(), 10_000);
  const newest = props.install.public_tokens.at(-1);
  const token = created?.token ?? newest?.hint ?? 'pub_…';
  const endpoint = props.install.gateway_url;
  // The script sends to the origin it was loaded from: no data-endpoint needed.
  const scriptTag = `<script defer src="${endpoint}/tally.js" data-token="${token}"></script>`;
  const npm = `import { init } from '@tally/core';\n\ninit({ token: '${token}', endpoint: '${endpoint}' });`;
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
        <p>
          Your new token, shown only now: <code class="token">{created.token}</code>
        </p>
      ) : (
        <>
          {props.install.public_tokens.length > 0 ? (
            <p>
              This project has {props.install.public_tokens.length === 1 ? 'a public token' : 'public tokens'}{' '}
              starting <code>{props.install.public_tokens.map((t) => t.hint).join(', ')}</code> (Tally keeps
              only a hash of it, so the whole token cannot be shown again). Use it, or make a new one.
            </p>
          ) : (
            <p>This project has no public token yet.</p>
          )}
          {props.project.access.can_edit && (
            <button
              type="button"
              onClick={async () => {
                try {
                  setCreated(
                    await props.api.send<CreatedToken>(
                      'POST',
                      `/projects/${encodeURIComponent(props.project.id)}/public-tokens`,
                    ),
                  );
                } catch (e) {
                  setError((e as Error).message);
                }
              }}
            >
              Create a public token
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
      <Snippet text={scriptTag} label="Script tag" />
      <p>Or from a bundled application:</p>
      <Snippet text={npm} label="@tally/core" />
      {!props.install.has_data && <output class="hint">Waiting for the first pageview…</output>}
    </section>
  );
}

function Snippet({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="snippet">
      <pre>
        <code>{text}</code>
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
