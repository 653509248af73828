// Argument mistakes: what the command line itself got wrong (an unknown command or action, an argument or
// option missing, a value of the wrong form), told from the arguments alone, before anything is opened.
// The CLI answers every one alike (cli.ts): the message, then the usage, exit code 2. Anything else (a
// store or the warehouse refusing, an unknown project, a running process in the way) is exit code 1.

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Runs a check of an argument's form (a project id, an email, an origin), its refusal a usage error. */
export function checkArgument<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/**
 * The warehouse's refusals of a report's parameters (a month, a range, a currency, a filter, a dimension):
 * argument mistakes too. Told by name, so that a command that does not read the warehouse never loads it.
 */
const REPORT_PARAMETER_ERRORS = new Set([
  'RevenueQueryError',
  'TrafficRangeError',
  'FilterSyntaxError',
  'BreakdownError',
]);

/** Whether an error is an argument mistake: ours, node:util parseArgs' (ERR_PARSE_ARGS_*), a report parameter's. */
export function isArgumentMistake(error: unknown): boolean {
  if (error instanceof UsageError) return true;
  if (String((error as { code?: unknown } | null)?.code).startsWith('ERR_PARSE_ARGS')) return true;
  return error instanceof Error && REPORT_PARAMETER_ERRORS.has(error.name);
}
