// A small React application for the browser test of @tally/react: its own minimal router (useState +
// history.pushState, as routers do), pageviews from <TrackPageviews path>, and buttons that send an event
// and identify through useTally(). Rendered under StrictMode, whose doubled effects must not double-count.
// Bundled by the test with esbuild once per tested React version (an alias points `react` and `react-dom` at
// React 18's copy); the page sets TALLY_TEST_CONFIG = { token, endpoint } before loading it, and the app reports
// the React it runs as appReactVersions.
import { TallyProvider, TrackPageviews, useTally } from '@tally/react';
import {
  createElement,
  type ReactNode,
  version as reactVersion,
  StrictMode,
  useEffect,
  useState,
} from 'react';
import { version as reactDomVersion } from 'react-dom';
import { createRoot } from 'react-dom/client';

interface PageGlobals {
  TALLY_TEST_CONFIG: { token: string; endpoint: string };
  location: { pathname: string };
  history: { pushState(state: unknown, unused: string, url: string): void };
  document: { getElementById(id: string): unknown };
  addEventListener(type: string, listener: () => void): void;
  removeEventListener(type: string, listener: () => void): void;
  appSessionId?: string;
  appReactVersions?: { react: string; reactDom: string };
}
const page = globalThis as unknown as PageGlobals;
page.appReactVersions = { react: reactVersion, reactDom: reactDomVersion };

function Shop({ path, navigate }: { path: string; navigate: (to: string) => void }): ReactNode {
  const tally = useTally();
  useEffect(() => {
    page.appSessionId = tally.getSessionId();
  }, [tally]);
  return createElement(
    'main',
    null,
    createElement('h1', { id: 'route' }, path),
    createElement(
      'button',
      { id: 'to-pricing', type: 'button', onClick: () => navigate('/react/pricing') },
      'Pricing',
    ),
    createElement(
      'button',
      { id: 'to-checkout', type: 'button', onClick: () => navigate('/react/checkout') },
      'Checkout',
    ),
    createElement(
      'button',
      { id: 'buy', type: 'button', onClick: () => tally.event('purchase_clicked', { plan: 'pro' }) },
      'Buy',
    ),
    createElement(
      'button',
      { id: 'sign-in', type: 'button', onClick: () => tally.identify('cus_react') },
      'Sign in',
    ),
  );
}

function App(): ReactNode {
  const [path, setPath] = useState(page.location.pathname);
  useEffect(() => {
    const onPop = () => setPath(page.location.pathname);
    page.addEventListener('popstate', onPop);
    return () => page.removeEventListener('popstate', onPop);
  }, []);
  const navigate = (to: string) => {
    page.history.pushState({}, '', to);
    setPath(to);
  };
  const { token, endpoint } = page.TALLY_TEST_CONFIG;
  return createElement(
    TallyProvider,
    { token, endpoint, allowLocalhost: true }, // the test pages are served from 127.0.0.1
    createElement(TrackPageviews, { path }),
    createElement(Shop, { path, navigate }),
  );
}

createRoot(page.document.getElementById('root') as Element).render(
  createElement(StrictMode, null, createElement(App)),
);
