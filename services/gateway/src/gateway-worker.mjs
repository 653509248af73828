// Entry of the gateway worker thread when Tally runs from its TypeScript sources (tests, tsx); the compiled
// dist/ runs gateway-worker.js directly. Node 20 does not apply the parent's `--import tsx` loader hooks to
// worker threads, so the thread registers tsx itself before it loads the TypeScript source.
import { register } from 'tsx/esm/api';

register();
await import('./gateway-worker.ts');
