// The `tally` command's entry (bin/tally.js loads it): runs the command line it was given (cli.ts).
import { runCli } from './cli.ts';

process.exitCode = await runCli(process.argv.slice(2));
