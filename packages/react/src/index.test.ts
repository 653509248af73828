// Server rendering: the binding renders with react-dom/server and touches no browser global while doing so,
// under each React version the package supports (18 and 19).
//
// Each version runs from its own esbuild bundle of ssr-kit.ts (the binding plus that version's `react` and
// `react-dom/server`), built with scripts/react-versions.ts: React 18 is installed under the aliases
// react-18 / react-dom-18, and a plain import would mix copies (@tally/react's `import 'react'` and
// react-dom-18's own `require('react')` both find React 19), so the bundle's `alias` points every `react`
// and `react-dom` import, theirs included, at the 18 copy, and its metafile is checked to hold that copy only.
// React 19 goes through the same bundling (with no alias), so both versions run the very same way. The bundle
// is CommonJS loaded with Node's own require: vitest's module runner plays no part in it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { ReactNode } from 'react';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  assertOneReact,
  REACT_VERSIONS,
  type ReactVersion,
  reactBuildOptions,
} from '../scripts/react-versions.ts';
import type * as SsrKit from './ssr-kit.ts';

type Kit = typeof SsrKit;

/** Bundles ssr-kit.ts with `version` of React and loads it (type-checked against React 19's types). */
async function loadKit(version: ReactVersion): Promise<Kit> {
  const result = await build({
    entryPoints: [fileURLToPath(new URL('./ssr-kit.ts', import.meta.url))],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    write: false,
    logLevel: 'silent',
    ...reactBuildOptions(version),
  });
  assertOneReact(result.metafile, version);
  const code = result.outputFiles[0]?.text;
  if (!code) throw new Error('esbuild produced no output');
  const dir = mkdtempSync(join(tmpdir(), 'tally-react-ssr-'));
  try {
    const file = join(dir, `react-${version.major}.cjs`);
    writeFileSync(file, code);
    return createRequire(import.meta.url)(file) as Kit;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const BROWSER_GLOBALS = ['window', 'document', 'location', 'history', 'localStorage', 'sessionStorage'];
let touched: string[] = [];

beforeEach(() => {
  touched = [];
  for (const name of BROWSER_GLOBALS) {
    Object.defineProperty(globalThis, name, {
      configurable: true,
      get() {
        touched.push(name);
        return undefined;
      },
    });
  }
});
afterEach(() => {
  for (const name of BROWSER_GLOBALS) delete (globalThis as Record<string, unknown>)[name];
});

describe.each(REACT_VERSIONS)('React $major', (version) => {
  let kit: Kit;
  beforeAll(async () => {
    kit = await loadKit(version);
  });

  it('renders with that version: react and react-dom/server are one copy of it', () => {
    expect(kit.reactVersion).toMatch(new RegExp(`^${version.major}\\.`));
    expect(kit.serverVersion).toBe(kit.reactVersion);
  });

  it('renders on the server without touching window, document, location, history or storage', () => {
    const { createElement, renderToString, TallyProvider, TrackPageviews, useTally } = kit;
    function BuyButton(): ReactNode {
      const tally = useTally();
      return createElement('button', { type: 'button', onClick: () => tally.event('buy') }, 'Buy');
    }
    const html = renderToString(
      createElement(
        TallyProvider,
        { token: 'pub_test', endpoint: 'https://tally.example.com' },
        createElement(TrackPageviews, { path: '/pricing' }),
        createElement(BuyButton),
      ),
    );
    expect(html).toBe('<button type="button">Buy</button>');
    expect(touched).toEqual([]);
  });

  it('gives an inert API on the server: calls do nothing and never throw', () => {
    const { createElement, renderToString, TallyProvider, useTally } = kit;
    let api: ReturnType<typeof useTally> | undefined;
    function Probe(): null {
      api = useTally();
      return null;
    }
    renderToString(
      createElement(
        TallyProvider,
        { token: 'pub_test', endpoint: 'https://t.example' },
        createElement(Probe),
      ),
    );
    expect(() => {
      api?.event('server-side');
      api?.identify('cus_1');
      api?.pageview();
      api?.reset();
    }).not.toThrow();
    expect(api?.getSessionId()).toBe('');
  });

  it('is inert outside a provider', () => {
    const { createElement, renderToString, useTally } = kit;
    let api: ReturnType<typeof useTally> | undefined;
    function Probe(): null {
      api = useTally();
      return null;
    }
    renderToString(createElement(Probe));
    expect(api?.getSessionId()).toBe('');
    expect(() => api?.event('x')).not.toThrow();
  });
});
