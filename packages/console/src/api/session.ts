/**
 * The API key lives in sessionStorage only: it survives a reload of this tab, not the tab itself, and is never
 * put in a URL, a cookie or a log. Signing out removes it.
 */
const STORAGE_KEY = 'works-api.console.apiKey';

export function storedApiKey(): string | null {
  try {
    return sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null; // storage disabled: the key lasts as long as the page
  }
}

export function storeApiKey(apiKey: string): void {
  try {
    sessionStorage.setItem(STORAGE_KEY, apiKey);
  } catch {
    // storage disabled: the key lasts as long as the page
  }
}

export function forgetApiKey(): void {
  try {
    sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // nothing stored
  }
}

/** The `prefix` an API key listing shows for this key (`wk_<prefix>_<secret>` → `wk_<prefix>`). */
export function prefixOf(apiKey: string): string {
  return apiKey.split('_').slice(0, 2).join('_');
}
