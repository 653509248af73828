// @tally/state-files: the files Tally keeps under TALLY_DATA_DIR. Their modes (private-modes.ts), and
// damaged files refused when they are opened with an error naming them (damaged-state-file.ts): LMDB files
// checked before they are mapped (lmdb-file.ts) and closed only once lmdb-js's write threads are done with
// them (lmdb-write-threads.ts), JSON files parsed with the file's name (json-file.ts); the
// address a running process serves, for the commands beside it (published-address.ts).
// Design notes: docs/design/state-files.md.
export * from './damaged-state-file.ts';
export * from './json-file.ts';
export * from './lmdb-file.ts';
export * from './lmdb-write-threads.ts';
export * from './private-modes.ts';
export * from './published-address.ts';
