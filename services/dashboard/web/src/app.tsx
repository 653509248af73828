// The app's pages and their paths. A project's dashboard and a share link's view are the same views (views.ts)
// inside the same shell; only the credentials and what they may see differ:
//   /login                      sign in
//   /set-password#token=link_…  set a password with the one-time link `tally users add` prints (or a reset mails)
//   /forgot-password            ask for a link that sets a new password
//   /invite#token=inv_…         accept an invitation to a project
//   /                           the projects of the signed-in user
//   /projects/:project/:view?   a project's views (traffic by default)
//   /share/:token/:view?        a share link's views (read-only; password prompt first when it has one)
import { ErrorBoundary, LocationProvider, Route, Router } from 'preact-iso';
import { ForgotPasswordPage } from './pages/forgot-password.tsx';
import { HomePage } from './pages/home.tsx';
import { InvitePage } from './pages/invite.tsx';
import { ProjectPage } from './pages/project.tsx';
import { SetPasswordPage } from './pages/set-password.tsx';
import { SharedPage } from './pages/shared.tsx';
import { SignInPage } from './pages/sign-in.tsx';
import { NotFound } from './ui/messages.tsx';

export function App() {
  return (
    <LocationProvider>
      <ErrorBoundary>
        <Router>
          <Route path="/login" component={SignInPage} />
          <Route path="/set-password" component={SetPasswordPage} />
          <Route path="/forgot-password" component={ForgotPasswordPage} />
          <Route path="/invite" component={InvitePage} />
          <Route path="/share/:token/:view?" component={SharedPage} />
          <Route path="/projects/:project/:view?" component={ProjectPage} />
          <Route path="/" component={HomePage} />
          <Route default component={NotFound} />
        </Router>
      </ErrorBoundary>
    </LocationProvider>
  );
}
