// Token store in a JSON file (TALLY_DATA_DIR/tokens.json), for a single machine without Redis. Writes go
// to a temporary file that is renamed over the old one, so a reader never sees half a file.
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  assertProjectId,
  generateToken,
  matchesToken,
  newTokenInfo,
  type TokenInfo,
  type TokenKind,
  type TokenStore,
} from './token.ts';

export class FileTokenStore implements TokenStore {
  readonly path: string;

  constructor(dataDir: string) {
    this.path = join(dataDir, 'tokens.json');
  }

  async create(projectId: string, kind: TokenKind): Promise<{ token: string; info: TokenInfo }> {
    assertProjectId(projectId);
    const token = generateToken(kind);
    const info = newTokenInfo(token, projectId, kind);
    await this.#write([...(await this.list()), info]);
    return { token, info };
  }

  async list(): Promise<TokenInfo[]> {
    try {
      const parsed = JSON.parse(await readFile(this.path, 'utf8')) as { tokens?: TokenInfo[] };
      return parsed.tokens ?? [];
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  }

  async revoke(tokenOrId: string): Promise<boolean> {
    const tokens = await this.list();
    const target = tokens.find((t) => !t.revoked_at && matchesToken(t, tokenOrId));
    if (!target) return false;
    target.revoked_at = new Date().toISOString();
    await this.#write(tokens);
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

  async #write(tokens: TokenInfo[]): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true });
    const tmp = `${this.path}.${process.pid}.tmp`;
    await writeFile(tmp, `${JSON.stringify({ tokens }, null, 2)}\n`, { mode: 0o600 });
    await rename(tmp, this.path);
  }
}
