// Token store in a JSON file (TALLY_DATA_DIR/tokens.json), for a single machine without Redis. Writes go
// to a temporary file that is renamed over the old one, so a reader never sees half a file.
import { rename, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { makePrivateDir, readStateJson } from '@tally/state-files';
import {
  assertProjectId,
  generateToken,
  matchesToken,
  newTokenInfo,
  type ProjectAccess,
  projectAccess,
  type TokenInfo,
  type TokenKind,
  type TokenStore,
} from './token.ts';

/** The file's content: the tokens, and the projects' settings by project id. */
interface TokenFile {
  tokens?: TokenInfo[];
  projects?: Record<string, ProjectAccess>;
}

export class FileTokenStore implements TokenStore {
  readonly path: string;

  constructor(dataDir: string) {
    this.path = join(dataDir, 'tokens.json');
  }

  async create(projectId: string, kind: TokenKind): Promise<{ token: string; info: TokenInfo }> {
    assertProjectId(projectId);
    const token = generateToken(kind);
    const info = newTokenInfo(token, projectId, kind);
    const file = await this.#read();
    await this.#write({ ...file, tokens: [...(file.tokens ?? []), info] });
    return { token, info };
  }

  async list(): Promise<TokenInfo[]> {
    return (await this.#read()).tokens ?? [];
  }

  async setAllowedOrigins(projectId: string, origins: readonly string[]): Promise<ProjectAccess> {
    const access = projectAccess(projectId, origins);
    const file = await this.#read();
    await this.#write({ ...file, projects: { ...file.projects, [projectId]: access } });
    return access;
  }

  async projects(): Promise<ProjectAccess[]> {
    return Object.values((await this.#read()).projects ?? {});
  }

  async #read(): Promise<TokenFile> {
    const file = await readStateJson<TokenFile>(
      this.path,
      'mend the JSON or restore the file from a backup (deleting it revokes every token and origin setting)',
    );
    return file ?? {};
  }

  async revoke(tokenOrId: string): Promise<boolean> {
    const file = await this.#read();
    const target = file.tokens?.find((t) => !t.revoked_at && matchesToken(t, tokenOrId));
    if (!target) return false;
    target.revoked_at = new Date().toISOString();
    await this.#write(file);
    return true;
  }

  async version(): Promise<string> {
    try {
      const s = await stat(this.path);
      return `${s.mtimeMs}:${s.size}:${s.ino}`;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'none';
      throw error;
    }
  }

  async close(): Promise<void> {}

  async #write(file: TokenFile): Promise<void> {
    makePrivateDir(dirname(this.path));
    const tmp = `${this.path}.${process.pid}.tmp`;
    await writeFile(
      tmp,
      `${JSON.stringify({ tokens: file.tokens ?? [], ...(file.projects && { projects: file.projects }) }, null, 2)}\n`,
      { mode: 0o600 },
    );
    await rename(tmp, this.path);
  }
}
