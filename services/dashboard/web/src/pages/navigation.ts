// Where the app sends a visitor who is not signed in, and back again afterwards. `next` is only ever a path
// of this app (an absolute URL or `//host` would make the sign-in page an open redirect).

export const signInPath = (next: string) => `/login?next=${encodeURIComponent(next)}`;

export function safeNext(next: string | undefined): string {
  if (!next || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return '/';
  return next;
}

export const currentPath = () => location.pathname + location.search;
