// `node --import ./test/support/module-trace.mjs …`: appends the URL of every module the process resolves
// to the file named by TALLY_MODULE_TRACE, one per line, so a test can tell which libraries a command loads.
import { register } from 'node:module';

register('./module-trace-hooks.mjs', import.meta.url, { data: { file: process.env.TALLY_MODULE_TRACE } });
