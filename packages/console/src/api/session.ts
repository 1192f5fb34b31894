/**
 * The emailed sign-in link is `<PUBLIC_URL>/console/sign-in#token=<token>`: the token travels in the fragment,
 * which the browser never sends to a server (no access log, proxy or Referer sees it). The console reads it once,
 * removes it from the address bar and history, and posts it (POST /v1/sessions).
 */
export function takeSignInToken(): string | null {
  const match = /(?:^#|&)token=([A-Za-z0-9_-]+)/.exec(window.location.hash);
  if (!match) return null;
  window.history.replaceState(null, '', window.location.pathname + window.location.search);
  return match[1]!;
}

/** The address an invitation's link names (`?email=`), to fill in the sign-in form. */
export function invitedEmail(): string {
  return new URLSearchParams(window.location.search).get('email') ?? '';
}
