// Entry of the base script-tag bundle (tally.js, served by the gateway at GET /tally.js): the tracker
// started from its <script> tag (script-tag.ts), within the 2 KB gzip budget. tally.full.js (script-full.ts)
// adds outbound links, file downloads and path exclusion. It is only ever a bundle entry point, never
// imported, which is why the package can still declare `sideEffects: false`.
//   <script defer src="https://tally.example.com/tally.js" data-token="pub_…"></script>
import { startFromScriptTag } from './script-tag.ts';

startFromScriptTag();
