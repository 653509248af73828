// Test-only entry for src/index.test.ts: the binding together with the React and react-dom/server that render
// it. The test bundles this file once per tested React version (scripts/react-versions.ts), so the hooks that
// @tally/react calls and the server renderer always come from the same React copy.
export { createElement, version as reactVersion } from 'react';
export { renderToString, version as serverVersion } from 'react-dom/server';
export { TallyProvider, TrackPageviews, useTally } from './index.ts';
