// What every view of a project's dashboard is given (views.ts lists the views): in a file of its own, so that
// the views and their list do not import each other.
import type { Api } from '../api/client.ts';
import type { Project } from '../api/types.ts';

export interface ViewProps {
  api: Api;
  project: Project;
  /** The URL of the view (`/projects/my-site` or `/share/shr_…` plus the view's own segment). */
  path: string;
  /** The signed-in user's email (none on a share link). */
  user?: string | undefined;
}
