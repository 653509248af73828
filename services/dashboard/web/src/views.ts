// The views of a project's dashboard, in the order of its navigation. Each is a component given the project
// and the API with the viewer's credentials. A view that shows revenue says so (`revenue: true`) and is left
// out, with nothing of it requested, where the credentials may not read revenue (a share link that hides it);
// the realtime view, the revenue views (revenue, customers) and health are loaded lazily so that the first load stays small;
// health is never on a share link (the API refuses it there).
import type { ComponentType } from 'preact';
import { lazy } from 'preact-iso';
import type { Project } from './api/types.ts';
import { TrafficView } from './views/traffic.tsx';
import type { ViewProps } from './views/view-props.ts';

export type { ViewProps } from './views/view-props.ts';

export interface DashboardView {
  /** The path segment after the project (`''` for the default view). */
  id: string;
  label: string;
  /** Shows revenue figures: hidden where `access.revenue` is false. */
  revenue?: boolean;
  /**
   * Settings: only for signed-in members (not share links or read keys). Viewers see their own parts there
   * (email reports); what changes the project is shown to owners and admins (access.can_edit).
   */
  membersOnly?: boolean;
  /** For those who run the project (signed-in users), never on a share link. */
  notShared?: boolean;
  component: ComponentType<ViewProps>;
}

export const VIEWS: DashboardView[] = [
  { id: '', label: 'Traffic', component: TrafficView },
  {
    id: 'realtime',
    label: 'Realtime',
    component: lazy(() => import('./views/realtime.tsx').then((m) => m.RealtimeView)),
  },
  {
    id: 'revenue',
    label: 'Revenue',
    revenue: true,
    component: lazy(() => import('./views/revenue.tsx').then((m) => m.RevenueView)),
  },
  {
    id: 'customers',
    label: 'Customers',
    revenue: true,
    component: lazy(() => import('./views/customers.tsx').then((m) => m.CustomersView)),
  },
  {
    id: 'health',
    label: 'Health',
    notShared: true,
    component: lazy(() => import('./views/health.tsx').then((m) => m.HealthView)),
  },
  {
    id: 'settings',
    label: 'Settings',
    membersOnly: true,
    component: lazy(() => import('./views/settings.tsx').then((m) => m.SettingsView)),
  },
];

export const viewsFor = (project: Project): DashboardView[] =>
  VIEWS.filter(
    (view) =>
      (!view.revenue || project.access.revenue) &&
      (!view.membersOnly || project.access.kind === 'user') &&
      (!view.notShared || project.access.kind !== 'share'),
  );
