/**
 * Headers that must appear at most once (RFC 9110 singletons, and ours). Node keeps only the first
 * `Authorization`, `Content-Type` or `Host` of a request that repeats one, and joins repeated other headers with
 * commas: either way the server would act on something other than what an intermediary between the client and
 * us may have seen. Such a request is refused instead (400).
 */
const SINGLETONS = new Set([
  'authorization',
  'content-type',
  'content-length',
  'host',
  'idempotency-key',
  'x-request-id',
]);

/** The first singleton header that `rawHeaders` (name, value, name, value, ...) holds twice, lower-cased. */
export function repeatedSingletonHeader(rawHeaders: readonly string[]): string | undefined {
  let seen: Set<string> | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    if (!SINGLETONS.has(name)) continue;
    seen ??= new Set();
    if (seen.has(name)) return name;
    seen.add(name);
  }
  return undefined;
}
