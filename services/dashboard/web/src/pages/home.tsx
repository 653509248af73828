// The signed-in user's projects; with one project the app opens it at once.

import { useEffect } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import type { Projects, SessionInfo } from '../api/types.ts';
import { useQuery } from '../api/use-query.ts';
import { CenteredCard, ErrorMessage, Loading } from '../ui/messages.tsx';
import { SignOutButton } from '../ui/shell.tsx';
import { isUnauthorized, sessionApi, useSignInOn } from './session.ts';

export function HomePage() {
  const { route } = useLocation();
  const projects = useQuery<Projects>(sessionApi, '/projects');
  const session = useQuery<SessionInfo>(sessionApi, '/session');
  useSignInOn(projects.error, route);
  const only = projects.data?.projects.length === 1 ? projects.data.projects[0] : undefined;
  useEffect(() => {
    if (only) route(`/projects/${encodeURIComponent(only.id)}`, true);
  }, [only, route]);

  if (projects.error && !isUnauthorized(projects.error)) return <ErrorMessage error={projects.error} />;
  if (!projects.data || only) return <Loading />;
  return (
    <CenteredCard title="Your projects">
      {projects.data.projects.length === 0 ? (
        <p>
          You may not read any project yet. Projects appear when their first token is created (
          <code>npx tally tokens create --project my-site --kind public</code>) and an administrator grants
          them to you.
        </p>
      ) : (
        <ul class="project-list">
          {projects.data.projects.map((p) => (
            <li key={p.id}>
              <a href={`/projects/${encodeURIComponent(p.id)}`}>{p.id}</a>
            </li>
          ))}
        </ul>
      )}
      {session.data && (
        <p class="hint">
          Signed in as {session.data.user.email}. <SignOutButton />
        </p>
      )}
    </CenteredCard>
  );
}
