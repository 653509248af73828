// The error for a state file under TALLY_DATA_DIR that cannot be what Tally wrote (a truncated or garbled
// LMDB file, a JSON file that does not parse): it names the file and says what the operator can do, and
// it is raised when the file is opened, so that a process refuses to start with one line instead of
// crashing on a signal (an LMDB file shorter than its pages is mapped, and reading past its end is
// SIGBUS) or, worse, going on with a replacement (new credentials over the stored ones).

export class DamagedStateFileError extends Error {
  /** The file, as the process was given it. */
  readonly file: string;
  readonly retryable = false;

  constructor(file: string, problem: string, remedy: string, options?: { cause?: unknown }) {
    super(`${file} is damaged (${problem}); ${remedy}`, options);
    this.name = 'DamagedStateFileError';
    this.file = file;
  }
}
