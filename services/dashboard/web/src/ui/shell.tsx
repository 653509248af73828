// The frame around every view: the header (project, navigation, who is signed in) and the view itself.
// Views come from views.ts, filtered by what the credentials may see; a share link shows its name instead
// of the project switcher and has no account menu. A lazily loaded view suspends into preact-iso's Router,
// which keeps the previous page on screen until it has loaded.

import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import type { Api } from '../api/client.ts';
import type { Project } from '../api/types.ts';
import { sessionApi } from '../pages/session.ts';
import { viewsFor } from '../views.ts';

export interface DashboardProps {
  api: Api;
  project: Project;
  /** The other projects the user may switch to (signed-in users). */
  projects?: Project[];
  /** The URL of the project's default view; other views add `/<id>`. */
  base: string;
  viewId: string;
  user?: string | undefined;
  /** Set on a share link's view: its name. */
  sharedName?: string;
}

export function Dashboard(props: DashboardProps) {
  const { url } = useLocation();
  const views = viewsFor(props.project);
  const view = views.find((v) => v.id === props.viewId);
  const viewPath = (id: string) => (id ? `${props.base}/${id}` : props.base);
  // Keep the range and filters when moving between views: they mean the same in each.
  const search = url.includes('?') ? url.slice(url.indexOf('?')) : '';
  return (
    <div class="app">
      <a class="skip-link" href="#main">
        Skip to the figures
      </a>
      <header class="topbar">
        <div class="topbar-inner">
          <span class="brand">
            <span class="logo" aria-hidden="true" />
            Tally
          </span>
          {props.sharedName !== undefined ? (
            <span class="project-name">
              {props.sharedName} <span class="badge">Shared view</span>
            </span>
          ) : (
            <ProjectSwitcher current={props.project} projects={props.projects ?? [props.project]} />
          )}
          {views.length > 1 && (
            <nav aria-label="Views" class="views-nav">
              {views.map((v) => (
                <a
                  key={v.id}
                  href={`${viewPath(v.id)}${v.membersOnly ? '' : search}`}
                  aria-current={v === view ? 'page' : undefined}
                >
                  {v.label}
                </a>
              ))}
            </nav>
          )}
          <span class="spacer" />
          {props.user && (
            <span class="account">
              <span class="account-email">{props.user}</span>
              <SignOutButton />
            </span>
          )}
        </div>
      </header>
      <main id="main" class="content" tabIndex={-1}>
        {view ? (
          <view.component
            api={props.api}
            project={props.project}
            path={viewPath(view.id)}
            user={props.user}
          />
        ) : (
          <p class="empty">
            This view does not exist here. <a href={props.base}>Back to the dashboard</a>.
          </p>
        )}
      </main>
    </div>
  );
}

function ProjectSwitcher({ current, projects }: { current: Project; projects: Project[] }) {
  const { route } = useLocation();
  if (projects.length <= 1) return <span class="project-name">{current.id}</span>;
  return (
    <label class="project-switcher">
      <span class="sr-only">Project</span>
      <select
        value={current.id}
        onChange={(e) =>
          route(`/projects/${encodeURIComponent((e.currentTarget as HTMLSelectElement).value)}`)
        }
      >
        {projects.map((p) => (
          <option key={p.id} value={p.id}>
            {p.id}
          </option>
        ))}
      </select>
    </label>
  );
}

export function SignOutButton() {
  const { route } = useLocation();
  const [busy, setBusy] = useState(false);
  return (
    <button
      type="button"
      class="link-button"
      disabled={busy}
      onClick={async () => {
        setBusy(true);
        try {
          await sessionApi.send('DELETE', '/session');
        } finally {
          route('/login', true);
        }
      }}
    >
      Sign out
    </button>
  );
}
