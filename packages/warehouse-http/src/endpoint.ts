// How a running Tally process tells the CLI and analysts where its warehouse's HTTP interface is and with
// which credentials: TALLY_DATA_DIR/warehouse-http.json, readable by its owner only (it holds the
// passwords). The passwords themselves are made once and kept in TALLY_DATA_DIR/warehouse-users.json
// (owner only), so that a BI tool configured with them keeps working after a restart; delete that file to
// get new ones at the next start. A file that is not what Tally wrote (garbled JSON, no passwords in it) is
// refused with an error naming it, never replaced: replacing it would lock out every tool configured
// with the stored passwords, without a word.
import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DamagedStateFileError, readStateJsonSync } from '@tally/state-files';

/** Where a running process publishes the HTTP interface of the data directory it holds. */
export const endpointFile = (tallyDataDir: string) => join(tallyDataDir, 'warehouse-http.json');
const credentialsFile = (tallyDataDir: string) => join(tallyDataDir, 'warehouse-users.json');

export interface Credentials {
  user: string;
  password: string;
}

export interface PublishedEndpoint {
  url: string;
  /** The writer (readonly=0): what the CLI uses. */
  user: string;
  password: string;
  /** The read-only user (readonly=1) for analysts' tools. */
  analyst: Credentials;
  pid: number;
}

/** The writer's and the analyst's credentials of this data directory, made on first use. */
export function warehouseCredentials(tallyDataDir: string): { writer: Credentials; analyst: Credentials } {
  const file = credentialsFile(tallyDataDir);
  const stored = readStateJsonSync<{ writer?: Partial<Credentials>; analyst?: Partial<Credentials> }>(
    file,
    DAMAGED_CREDENTIALS,
  );
  if (stored !== null) {
    const { writer, analyst } = stored ?? {};
    if (!isCredentials(writer) || !isCredentials(analyst)) {
      throw new DamagedStateFileError(
        file,
        'no writer and analyst user with a password in it',
        DAMAGED_CREDENTIALS,
      );
    }
    return { writer, analyst };
  }
  const made = {
    writer: { user: 'tally', password: randomBytes(24).toString('base64url') },
    analyst: { user: 'analyst', password: randomBytes(24).toString('base64url') },
  };
  writeAtomically(file, JSON.stringify(made));
  return made;
}

const DAMAGED_CREDENTIALS =
  'delete it to have new warehouse passwords made at the next start (`npx tally warehouse credentials` shows ' +
  'them; tools configured with the old ones need the new ones)';

function isCredentials(value: Partial<Credentials> | undefined): value is Credentials {
  return typeof value?.user === 'string' && typeof value.password === 'string' && value.password !== '';
}

function writeAtomically(file: string, content: string): void {
  writeFileSync(`${file}.tmp`, content, { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}

/** Writes the endpoint file (readable by the owner only: it holds the passwords). */
export function publishEndpoint(tallyDataDir: string, endpoint: PublishedEndpoint): void {
  writeAtomically(endpointFile(tallyDataDir), JSON.stringify(endpoint));
}

export function unpublishEndpoint(tallyDataDir: string): void {
  rmSync(endpointFile(tallyDataDir), { force: true });
}

/** The endpoint a running process published, or null (none, or left behind by a process that died). */
export function readPublishedEndpoint(tallyDataDir: string): PublishedEndpoint | null {
  try {
    const endpoint = JSON.parse(readFileSync(endpointFile(tallyDataDir), 'utf8')) as PublishedEndpoint;
    process.kill(endpoint.pid, 0); // throws when no such process
    return endpoint;
  } catch {
    return null;
  }
}

/** A ClickHouse URL with credentials in it (the writer's by default), for openClickHouseWarehouse. */
export function endpointUrl(endpoint: PublishedEndpoint, credentials: Credentials = endpoint): string {
  const url = new URL(endpoint.url);
  url.username = encodeURIComponent(credentials.user);
  url.password = encodeURIComponent(credentials.password);
  return url.toString().replace(/\/$/, '');
}
