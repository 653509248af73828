// Server rendering: the binding renders with react-dom/server and touches no browser global while doing so.
import { createElement, type ReactNode } from 'react';
import { renderToString } from 'react-dom/server';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { TallyProvider, TrackPageviews, useTally } from './index.ts';

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

function BuyButton(): ReactNode {
  const tally = useTally();
  return createElement('button', { type: 'button', onClick: () => tally.event('buy') }, 'Buy');
}

const app = () =>
  createElement(
    TallyProvider,
    { token: 'pub_test', endpoint: 'https://tally.example.com' },
    createElement(TrackPageviews, { path: '/pricing' }),
    createElement(BuyButton),
  );

it('renders on the server without touching window, document, location, history or storage', () => {
  const html = renderToString(app());
  expect(html).toBe('<button type="button">Buy</button>');
  expect(touched).toEqual([]);
});

it('gives an inert API on the server: calls do nothing and never throw', () => {
  let api: ReturnType<typeof useTally> | undefined;
  function Probe(): null {
    api = useTally();
    return null;
  }
  renderToString(
    createElement(TallyProvider, { token: 'pub_test', endpoint: 'https://t.example' }, createElement(Probe)),
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
  let api: ReturnType<typeof useTally> | undefined;
  function Probe(): null {
    api = useTally();
    return null;
  }
  renderToString(createElement(Probe));
  expect(api?.getSessionId()).toBe('');
  expect(() => api?.event('x')).not.toThrow();
});
