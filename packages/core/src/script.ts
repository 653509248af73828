// Entry of the script-tag bundle (tally.js): starts the tracker from its own <script> tag's attributes and
// exposes it as `window.tally` (`tally.event(name, data)`, `tally.identify(id)`, `tally.pageview()`,
// `tally.reset()`, `tally.getSessionId()`). It is only ever a bundle entry point, never imported, which is
// why the package can still declare `sideEffects: false`.
//   <script defer src="https://tally.example.com/tally.js" data-token="pub_…"
//           data-endpoint="https://tally.example.com" data-auto-pageviews="false"></script>
// data-endpoint defaults to the origin the script was loaded from.
import { init } from './index.ts';

interface ScriptElement {
  src: string;
  dataset: Record<string, string | undefined>;
}

const scope = globalThis as unknown as { document: { currentScript: ScriptElement | null }; tally?: unknown };
const script = scope.document.currentScript;
const token = script?.dataset.token;
if (script && token) {
  scope.tally = init({
    token,
    endpoint: script.dataset.endpoint || new URL(script.src).origin,
    autoPageviews: script.dataset.autoPageviews !== 'false',
    debug: script.dataset.debug === 'true',
  });
}
