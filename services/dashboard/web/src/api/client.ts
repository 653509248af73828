// The read API as the app calls it: same-origin JSON under /api/v1 with the signed-in session's cookie, or
// with a bearer credential (a share link's token or grant) and no cookie at all, so a shared view never
// borrows the viewer's own session. Failures become ApiError with the status, for the views to act on
// (401: sign in again; 403 on a share: the link no longer works).

export class ApiError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
  }
}

export type Params = Record<string, string | number | undefined>;

export interface Api {
  /** Whose credentials: the signed-in user's session, or a share link's bearer. */
  readonly kind: 'session' | 'bearer';
  get<T>(path: string, params?: Params, signal?: AbortSignal): Promise<T>;
  /**
   * The resource unless it is still the one `etag` names (then null: the server answered 304), with the
   * ETag of what it answered (polling: an unchanged answer costs a few bytes and no redraw).
   */
  getIfChanged<T>(
    path: string,
    params: Params | undefined,
    etag: string | null,
    signal?: AbortSignal,
  ): Promise<{ data: T; etag: string | null } | null>;
  send<T>(method: 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T>;
  /** The same request answered as CSV, as a Blob to download. */
  csv(path: string, params?: Params): Promise<Blob>;
}

export function urlOf(path: string, params?: Params): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params ?? {}))
    if (value !== undefined) search.set(key, String(value));
  const text = search.toString();
  return `/api/v1${path}${text ? `?${text}` : ''}`;
}

async function failure(response: Response): Promise<ApiError> {
  let message = response.statusText || `HTTP ${response.status}`;
  try {
    const body = (await response.json()) as { message?: string; error?: string };
    message = body.message ?? body.error ?? message;
  } catch {
    // not JSON: keep the status text
  }
  return new ApiError(response.status, message);
}

export function createApi(bearer?: string): Api {
  const headers: Record<string, string> = bearer ? { authorization: `Bearer ${bearer}` } : {};
  const credentials: RequestCredentials = bearer ? 'omit' : 'same-origin';
  /** The answer whatever its status; a network failure as ApiError 0. */
  async function exchange(url: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(url, { credentials, ...init, headers: { ...headers, ...init.headers } });
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error;
      throw new ApiError(0, 'The dashboard cannot be reached. Check your connection and try again.');
    }
  }
  async function request(url: string, init: RequestInit): Promise<Response> {
    const response = await exchange(url, init);
    if (!response.ok) throw await failure(response);
    return response;
  }
  return {
    kind: bearer ? 'bearer' : 'session',
    async get<T>(path: string, params?: Params, signal?: AbortSignal) {
      const response = await request(urlOf(path, params), {
        headers: { accept: 'application/json' },
        ...(signal ? { signal } : {}),
      });
      return (await response.json()) as T;
    },
    async getIfChanged<T>(
      path: string,
      params: Params | undefined,
      etag: string | null,
      signal?: AbortSignal,
    ) {
      // The page sets If-None-Match itself (the API's answers are no-store, so no cache would), and a
      // 304 then reaches it as it is.
      const response = await exchange(urlOf(path, params), {
        headers: { accept: 'application/json', ...(etag ? { 'if-none-match': etag } : {}) },
        ...(signal ? { signal } : {}),
      });
      if (response.status === 304) return null;
      if (!response.ok) throw await failure(response);
      return { data: (await response.json()) as T, etag: response.headers.get('etag') };
    },
    async send<T>(method: 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) {
      const init: RequestInit = { method, headers: { accept: 'application/json' } };
      if (body !== undefined) {
        init.body = JSON.stringify(body);
        init.headers = { accept: 'application/json', 'content-type': 'application/json' };
      }
      const response = await request(urlOf(path), init);
      if (response.status === 204) return undefined as T;
      return (await response.json()) as T;
    },
    async csv(path: string, params?: Params) {
      const response = await request(urlOf(path, { ...params, format: 'csv' }), {
        headers: { accept: 'text/csv' },
      });
      return response.blob();
    },
  };
}

/** Saves a Blob as a file through a temporary link (what a download button does without a server URL). */
export function saveFile(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
