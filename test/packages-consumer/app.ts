// A web application of a project that installed @tally/core and @tally/react from their tarballs, bundled
// by esbuild from that project's node_modules (test/packages-install.test.ts) and type-checked there with
// `tsc --noEmit`. React's provider and a direct @tally/core call must share the page's one tracker: one
// copy of @tally/core in the bundle, so both records carry the same session id.
import { event, getSessionId } from '@tally/core';
import { TallyProvider, TrackPageviews, useTally } from '@tally/react';
import { createElement, type ReactNode, useEffect } from 'react';
import { createRoot } from 'react-dom/client';

interface PageGlobals {
  TALLY_CONFIG: { token: string; endpoint: string };
  document: { getElementById(id: string): unknown };
  installedSessions?: { react: string; core: string };
}
const page = globalThis as unknown as PageGlobals;

function Shop(): ReactNode {
  const tally = useTally();
  useEffect(() => {
    tally.event('installed_react', { via: 'useTally' });
    event('installed_core', { via: '@tally/core' });
    page.installedSessions = { react: tally.getSessionId(), core: getSessionId() };
  }, [tally]);
  return createElement('h1', { id: 'shop' }, 'Installed');
}

// @ts-expect-error: the provider's props are typed (a token is a string)
createElement(TallyProvider, { token: 42, endpoint: '' });

createRoot(page.document.getElementById('root') as Parameters<typeof createRoot>[0]).render(
  createElement(
    TallyProvider,
    page.TALLY_CONFIG,
    createElement(TrackPageviews, { path: '/installed' }),
    createElement(Shop),
  ),
);
