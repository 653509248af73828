// The signed-in user's API (the session cookie), shared by the pages that need a session, and the redirect
// to the sign-in page when the session is missing or has ended.
import { useEffect } from 'preact/hooks';
import { ApiError, createApi } from '../api/client.ts';
import { currentPath, signInPath } from './navigation.ts';

export const sessionApi = createApi();

export const isUnauthorized = (error: Error | undefined) => error instanceof ApiError && error.status === 401;

/** Sends the visitor to sign in (and back here afterwards) when `error` says there is no session. */
export function useSignInOn(error: Error | undefined, route: (url: string, replace?: boolean) => void) {
  useEffect(() => {
    if (isUnauthorized(error)) route(signInPath(currentPath()), true);
  }, [error, route]);
}
