import { createHash, type Hash, timingSafeEqual } from 'node:crypto';
import { ProblemError } from './errors';
import { aboutField, ruleMessages } from './validation-messages';

/**
 * The cursors partners hold (`edges[].cursor`, `pageInfo.endCursor`, `after`): opaque, tamper-evident and bound to
 * the list that issued them. Inside, a list pages by the id of its last item (domain/paging.ts); outside, that id
 * travels with an HMAC-SHA256 tag over the id and the list: its operation, its parent ids (the path) and its
 * filters (every query parameter but `limit` and `after`, defaults filled in). A cursor of another list, of the
 * same list under another parent or with other filters, a forged or altered one, or one that is not ours at all
 * is `400 invalid_cursor`; never a page of something else.
 *
 * The tag is keyed from the server's own secret, with no new setting: the keys of ENCRYPTION_KEYS (or the embedded
 * database's key file), each through HKDF for this one purpose (prisma/src/secret-box.ts). The first key signs and every
 * key verifies, so a key rotation keeps the cursors already handed out, and every server of a deployment reads
 * the others' cursors.
 *
 * `c1` cursors: base64url of version byte 1, the id's 16 bytes and a 16-byte tag (44 characters). The cursors of
 * earlier versions (base64url of `v1:<id>`, unsigned) are refused as any other foreign cursor is: a client paging
 * across the deploy gets `invalid_cursor` once, and starts again from the first page.
 */
export interface ListBinding {
  /** The list operation (`listWorks`). */
  operationId: string;
  /** Its path parameters: the parent ids (`{ tenant_id }`). */
  path: Readonly<Record<string, string>>;
  /** Its filters: the query parameters but `limit` and `after`, with their defaults. */
  filters: Readonly<Record<string, string>>;
}

const VERSION = 1;
const TAG_BYTES = 16;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The list, as the tag covers it: canonical (sorted) so that the same list always reads the same. */
const sorted = (record: Readonly<Record<string, string>>) =>
  Object.keys(record)
    .sort()
    .map((key) => [key, record[key]!]);
const listText = (list: ListBinding) =>
  JSON.stringify(['works-api cursor', VERSION, list.operationId, sorted(list.path), sorted(list.filters)]);

export const invalidCursor = () =>
  new ProblemError(
    'invalid_cursor',
    'The `after` cursor is not one this list returned: start again from the first page.',
    {
      errors: [{ path: '/query/after', message: aboutField('/query/after', ruleMessages.ourCursor) }],
    },
  );

const SHA256_BLOCK_BYTES = 64;

/**
 * HMAC-SHA256 (RFC 2104) over `message` + id, with the key's pads and the list's text hashed once: a page hands out
 * a cursor per edge, all of one list, and `createHmac` per cursor (a key object each time, the list's text hashed
 * again) was a seventh of a list's CPU. Each cursor copies the two prepared hash states. Same tags as `createHmac`
 * (cursors.test.ts compares them).
 */
class ListSigner {
  constructor(
    private readonly inner: Hash,
    private readonly outer: Hash,
  ) {}

  static forKey(key: Buffer): ListSigner {
    const block = Buffer.alloc(SHA256_BLOCK_BYTES);
    (key.length > SHA256_BLOCK_BYTES ? createHash('sha256').update(key).digest() : key).copy(block);
    const pad = (byte: number) => block.map((keyByte) => keyByte ^ byte);
    return new ListSigner(createHash('sha256').update(pad(0x36)), createHash('sha256').update(pad(0x5c)));
  }

  /** This key's signer for messages that start with `prefix`. */
  startingWith(prefix: string): ListSigner {
    return new ListSigner(this.inner.copy().update(prefix), this.outer);
  }

  tag(id: Buffer): Buffer {
    const inner = this.inner.copy().update(id).digest();
    return this.outer.copy().update(inner).digest().subarray(0, TAG_BYTES);
  }
}

export class Cursors {
  private readonly keySigners: readonly ListSigner[];
  /** Each list's signers (one per key), prepared once for all the cursors of its page. */
  private readonly listSigners = new WeakMap<ListBinding, readonly ListSigner[]>();

  /** `keys`: the first signs, every one verifies (derived for this purpose: SecretBox.derivedKeys('cursor')). */
  constructor(keys: readonly Buffer[]) {
    if (keys.length === 0) throw new Error('cursors need a key');
    this.keySigners = keys.map((key) => ListSigner.forKey(key));
  }

  private signersOf(list: ListBinding): readonly ListSigner[] {
    let signers = this.listSigners.get(list);
    if (!signers) {
      const prefix = `${listText(list)}\0`;
      signers = this.keySigners.map((signer) => signer.startingWith(prefix));
      this.listSigners.set(list, signers);
    }
    return signers;
  }

  /** The cursor of the item `id` (a UUID) in `list`. */
  issue(list: ListBinding, id: string): string {
    if (!UUID.test(id)) throw new Error(`a cursor position must be a UUID, not ${id}`);
    const bytes = Buffer.from(id.replaceAll('-', ''), 'hex');
    return Buffer.concat([Buffer.of(VERSION), bytes, this.signersOf(list)[0]!.tag(bytes)]).toString('base64url');
  }

  /** The id a cursor of `list` stands for; `400 invalid_cursor` for any cursor this list did not issue. */
  read(list: ListBinding, cursor: string): string {
    const bytes = /^[A-Za-z0-9_-]{44}$/.test(cursor) ? Buffer.from(cursor, 'base64url') : Buffer.alloc(0);
    if (bytes.length !== 1 + 16 + TAG_BYTES || bytes[0] !== VERSION) throw invalidCursor();
    const id = bytes.subarray(1, 17);
    const tag = bytes.subarray(17);
    if (!this.signersOf(list).some((signer) => timingSafeEqual(signer.tag(id), tag))) throw invalidCursor();
    const hex = id.toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
}
