// A project's dashboard for a signed-in user: the projects the session may read, then the chosen view.
import { useLocation } from 'preact-iso';
import type { Projects, SessionInfo } from '../api/types.ts';
import { useQuery } from '../api/use-query.ts';
import { CenteredCard, ErrorMessage, Loading } from '../ui/messages.tsx';
import { Dashboard } from '../ui/shell.tsx';
import { isUnauthorized, sessionApi, useSignInOn } from './session.ts';

export function ProjectPage({ project: projectId, view }: { project: string; view?: string }) {
  const { route } = useLocation();
  const projects = useQuery<Projects>(sessionApi, '/projects');
  const session = useQuery<SessionInfo>(sessionApi, '/session');
  useSignInOn(projects.error ?? session.error, route);

  if (projects.error && !isUnauthorized(projects.error)) return <ErrorMessage error={projects.error} />;
  if (!projects.data) return <Loading />;
  const project = projects.data.projects.find((p) => p.id === projectId);
  if (!project) {
    return (
      <CenteredCard title="Project not found">
        <p>
          There is no project <strong>{projectId}</strong>, or you may not read it.{' '}
          <a href="/">Your projects</a>.
        </p>
      </CenteredCard>
    );
  }
  return (
    <Dashboard
      api={sessionApi}
      project={project}
      projects={projects.data.projects}
      base={`/projects/${encodeURIComponent(project.id)}`}
      viewId={view ?? ''}
      user={session.data?.user.email}
    />
  );
}
