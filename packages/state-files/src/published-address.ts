// The address a running process serves, published in TALLY_DATA_DIR (`<name>.address.json`, the URL and the
// process's pid) for the commands run beside it: `tally users add` prints a sign-in link on the port the
// dashboard really listens on, whatever DASHBOARD_PORT the CLI's own shell says. A file left behind by a
// process that died is ignored (its pid answers no signal).
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface PublishedAddress {
  url: string;
  pid: number;
}

const addressFile = (dataDir: string, name: string) => join(dataDir, `${name}.address.json`);

/** Publishes `url` as the address of `name`, served by this process. */
export function publishAddress(dataDir: string, name: string, url: string): void {
  const file = addressFile(dataDir, name);
  writeFileSync(`${file}.tmp`, JSON.stringify({ url, pid: process.pid } satisfies PublishedAddress));
  renameSync(`${file}.tmp`, file);
}

/** Removes the address of `name` if this process published it (a newer process's stays). */
export function unpublishAddress(dataDir: string, name: string): void {
  if (readPublishedAddress(dataDir, name)?.pid === process.pid)
    rmSync(addressFile(dataDir, name), { force: true });
}

/** The address of `name` a running process published, or null (none, unreadable, or its process is gone). */
export function readPublishedAddress(dataDir: string, name: string): PublishedAddress | null {
  try {
    const published = JSON.parse(readFileSync(addressFile(dataDir, name), 'utf8')) as PublishedAddress;
    if (typeof published.url !== 'string' || !Number.isInteger(published.pid)) return null;
    process.kill(published.pid, 0); // throws when no such process
    return published;
  } catch {
    return null;
  }
}
