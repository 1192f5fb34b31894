import { hash } from 'node:crypto';

/**
 * Strong entity tags computed from the resource itself: SHA-256 of its JSON, so the same tag always means the
 * same representation (whatever changed it: a rename, a new member, a transition) and nothing has to remember
 * versions. A one-key envelope (`{ "work": … }`) and the bare resource (the request actions) get the same tag,
 * so a tag read with GET can be sent with `If-Match` to an action.
 */
export function entityTag(resource: unknown): string {
  return bytesTag(JSON.stringify(versioned(resource)));
}

/**
 * What a tag versions: a request's `emailDelivery` changes on its own (the mail sender, moments after a create or
 * resend) and says nothing about the request's state, so it is left out; otherwise an `If-Match` sent right after
 * creating a request would fail with 412 because its email went out. A cached copy (`304`) can show an older
 * mail status; the state it shows is current.
 */
function versioned(resource: unknown): unknown {
  if (typeof resource === 'object' && resource !== null && 'emailDelivery' in resource)
    return { ...resource, emailDelivery: undefined };
  return resource;
}

/** A strong entity tag for some bytes (a file served as it is: the contract, the reference, the console). */
export function bytesTag(bytes: string | Buffer): string {
  return `"${hash('sha256', bytes, 'base64url').slice(0, 27)}"`;
}

/** The resource a response body holds: the value of a one-key envelope, or the body itself. */
export function resourceOf(body: unknown): unknown {
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const keys = Object.keys(body);
    if (keys.length === 1) return (body as Record<string, unknown>)[keys[0]!];
  }
  return body;
}

const TAG = /(W\/)?"[\x21\x23-\x7E\x80-\xFF]*"/g;

/** `*`, or the tags of an `If-Match` / `If-None-Match` list (RFC 9110 §13.1). */
function parseTags(header: string): '*' | Array<{ weak: boolean; opaque: string }> {
  if (header.trim() === '*') return '*';
  return Array.from(header.matchAll(TAG), ([tag, weak]) => ({
    weak: weak !== undefined,
    opaque: tag.slice(weak ? 2 : 0),
  }));
}

/**
 * `If-Match` as a test of a resource's current representation: strong comparison, so weak tags never match;
 * `*` matches any existing resource.
 */
export function ifMatchCondition(header: string): (resource: unknown) => boolean {
  const tags = parseTags(header);
  if (tags === '*') return () => true;
  const strong = new Set(tags.filter((tag) => !tag.weak).map((tag) => tag.opaque));
  return (resource) => strong.size > 0 && strong.has(entityTag(resource));
}

/** True when `If-None-Match` lists `tag` (weak comparison) or is `*`: the client's copy is current. */
export function noneMatchHit(header: string | undefined, tag: string): boolean {
  if (header === undefined) return false;
  const tags = parseTags(header);
  return tags === '*' || tags.some((candidate) => candidate.opaque === tag);
}
