// Starts the tracker from its own <script> tag, for the script-tag bundles (script.ts, script-full.ts):
// reads the tag's data- attributes, exposes the tracker as `window.tally` (callable as `tally('event', …)`
// as well as `tally.event(…)`), replays the calls the snippet queued before the script loaded, then counts
// pageviews. With data-endpoint left out, records go to the origin the script was loaded from (the Tally
// server that served it). It wires only what a bundle carries: browser.ts's createBrowserTracker would pull
// every optional feature into the base bundle.
import {
  browserPlatform,
  flushOnHide,
  optOutState,
  type PlatformConfig,
  trackNavigations,
} from './browser.ts';
import { createTracker, type Tracker } from './tracker.ts';

/** The tag's data- attributes (data-allow-localhost → allowLocalhost). */
export type Dataset = Record<string, string | undefined>;

interface ScriptElement {
  src: string;
  dataset: Dataset;
}

/** A boolean attribute: present (`data-hash-routing`, `="true"`) is on, absent or `="false"` is off. */
export const flag = (value: string | undefined): boolean => value != null && value !== 'false';

/** window.tally once started: `tally('event', …)` and `tally.event(…)` alike, plus optOut and optIn. */
type Api = ((name: string, ...args: unknown[]) => unknown) & Record<string, (...args: unknown[]) => unknown>;

/** The tag's attributes, before the tracker starts (the full bundle reads its own first). */
export const scriptData = (): Dataset | undefined =>
  (globalThis as unknown as { document: { currentScript: ScriptElement | null } }).document.currentScript
    ?.dataset;

/**
 * Starts the tracker; `ignore` adds a filter of the bundle's own (Do Not Track, excluded paths) to the
 * platform's. Returns the tracker, or undefined when the tag has no data-token.
 */
export function startFromScriptTag(ignore?: PlatformConfig['ignore']): Tracker | undefined {
  const scope = globalThis as unknown as {
    document: { currentScript: ScriptElement | null };
    // The snippet's stub: window.tally = window.tally || function () { (tally.q = tally.q || []).push(arguments) }
    tally?: Api;
  };
  const script = scope.document.currentScript;
  const data = script?.dataset;
  const token = data?.token;
  if (!script || !data || !token) return undefined;
  const tracker = createTracker(
    { token, endpoint: data.endpoint || new URL(script.src).origin, debug: flag(data.debug) },
    browserPlatform({ allowLocalhost: flag(data.allowLocalhost), ignore }),
  );
  flushOnHide(tracker);
  const api = Object.assign((name: string, ...args: unknown[]) => api[name]?.(...args), tracker, {
    optOut: () => optOutState('1'),
    optIn: () => optOutState(''),
  }) as unknown as Api;
  const queued = (scope.tally as { q?: unknown } | undefined)?.q ?? [];
  scope.tally = api;
  // The queued calls first (an optOut among them must hold before the first pageview), in their order.
  for (const args of queued as unknown as Iterable<[string]>) api(...args);
  if (data.autoPageviews !== 'false') trackNavigations(tracker);
  return tracker;
}
