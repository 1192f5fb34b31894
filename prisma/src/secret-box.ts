import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { KEY_BYTES, parseEncryptionKeys, SecretKeyError } from './encryption-keys';
import type { DatabaseTarget } from './target';

/**
 * Secrets at rest: what the service must be able to read back in plaintext (webhook signing secrets, which sign
 * every delivery, and the responses stored for idempotent replays, some of which carry a new API key or signing
 * secret) is sealed with AES-256-GCM before it is written. Whoever reads the database or a dump without the key
 * gets nothing usable. API keys themselves stay hashed (they never need to be read back).
 *
 * Keys: `ENCRYPTION_KEYS`, comma-separated base64 keys of 32 bytes. The first seals; every one opens, so a key is
 * rotated by putting a new one first and keeping the old one until nothing sealed with it is left (idempotent
 * replays expire in 24 hours; webhook secrets are re-sealed at start-up). Required with PostgreSQL. The embedded
 * PGlite, when ENCRYPTION_KEYS is unset, keeps one generated key in a file beside its folder (`<PGLITE_DIR>.key`,
 * mode 0600), so a new user needs nothing.
 *
 * A sealed value is text: `sealed:v2:<key id>:<base64url of iv(12) | ciphertext | tag(16)>`, where the key id is
 * the first 8 hex digits of the key's SHA-256, so the right key is found and a missing one named. Where the value
 * lives is authenticated too (AES-GCM's associated data): its table, column and row. A value moved to another
 * row or column does not open, so someone who can write to the database but not read the key cannot make the API
 * hand out another row's secret (a stored replay moved under their own idempotency key, say).
 *
 * The first form, `sealed:v1:`, was bound only to its purpose (`webhook-secret`, `idempotent-response`). It still
 * opens, so data from before and the values processes of the previous release write during a rolling upgrade stay
 * readable; every start re-seals the webhook secrets into the row-bound form (seal-at-rest.ts), and stored replays
 * in the first form expire within 24 hours.
 */
export { parseEncryptionKeys, SecretKeyError } from './encryption-keys';

const PREFIX = 'sealed:v2:';
const LEGACY_PREFIX = 'sealed:v1:';

/** Where a sealed value lives: it opens only there. */
export interface SealedSlot {
  table: 'webhook_endpoints' | 'idempotency_keys';
  column: 'secret' | 'previous_secret' | 'body';
  /** The row's id (for a composite key, its parts in one string, as `idempotencyKeySlot` writes them). */
  row: string;
}

/** A webhook endpoint's signing secret (`secret`) or the one it replaces during a rotation (`previous_secret`). */
export const webhookSecretSlot = (endpointId: string, column: 'secret' | 'previous_secret'): SealedSlot => ({
  table: 'webhook_endpoints',
  column,
  row: endpointId,
});

/** The response stored for an idempotency key: its row is the key within its scope. */
export const idempotencyKeySlot = (scope: string, key: string): SealedSlot => ({
  table: 'idempotency_keys',
  column: 'body',
  row: JSON.stringify([scope, key]),
});

/** The associated data of a slot: unambiguous (JSON), and never equal to a first-form purpose. */
const associatedData = (slot: SealedSlot): Buffer =>
  Buffer.from(JSON.stringify(['works-api sealed v2', slot.table, slot.column, slot.row]));

/** What the first form authenticated instead of the slot. */
const LEGACY_PURPOSE: Record<SealedSlot['table'], string> = {
  webhook_endpoints: 'webhook-secret',
  idempotency_keys: 'idempotent-response',
};

/** What a MAC made with these keys vouches for (each purpose has a key of its own, derived from each key). */
export type MacPurpose = 'stop-emails-link';

interface Key {
  id: string;
  bytes: Buffer;
}

export const keyIdOf = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex').slice(0, 8);

export const newEncryptionKey = (): string => randomBytes(KEY_BYTES).toString('base64');

export class SecretBox {
  private readonly keys: Key[];

  constructor(keys: Buffer[]) {
    if (keys.length === 0) throw new SecretKeyError('no encryption key');
    this.keys = keys.map((bytes) => ({ id: keyIdOf(bytes), bytes }));
  }

  /** The id of the key that seals; every key's ids, for dumps and their restores. */
  get sealingKeyId(): string {
    return this.keys[0]!.id;
  }

  holds(keyId: string): boolean {
    return this.keys.some((key) => key.id === keyId);
  }

  seal(plaintext: string, slot: SealedSlot): string {
    const key = this.keys[0]!;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key.bytes, iv);
    cipher.setAAD(associatedData(slot));
    const sealed = Buffer.concat([iv, cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${PREFIX}${key.id}:${sealed.toString('base64url')}`;
  }

  /**
   * The plaintext of a value sealed for `slot` (or, in the first form, for its purpose). Throws when it was
   * sealed for another place or altered. A value written before sealing existed (not sealed) is returned as it is.
   */
  open(value: string, slot: SealedSlot): string {
    const legacy = value.startsWith(LEGACY_PREFIX);
    if (!legacy && !value.startsWith(PREFIX)) return value;
    const [keyId, data] = value.slice(PREFIX.length).split(':') as [string, string | undefined];
    const key = this.keys.find((candidate) => candidate.id === keyId);
    if (!key || data === undefined)
      throw new SecretKeyError(
        `a secret is sealed with key ${keyId}, which ENCRYPTION_KEYS does not hold (restore it from the deployment that wrote the data)`,
      );
    const bytes = Buffer.from(data, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', key.bytes, bytes.subarray(0, 12));
    decipher.setAAD(legacy ? Buffer.from(LEGACY_PURPOSE[slot.table]) : associatedData(slot));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    try {
      return Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString('utf8');
    } catch {
      throw new SealedValueError(
        `a sealed value in ${slot.table}.${slot.column} does not open in its row: it was sealed for another row or column, or altered`,
      );
    }
  }

  /**
   * Keys for another use of the same secret (`cursor`: the tags of paging cursors; a MAC purpose), one per key and
   * in the same order (the first is the current one): HKDF-SHA256 of each key with the purpose as its info, so no
   * derived key says anything of the sealing key or of another purpose's.
   */
  derivedKeys(purpose: 'cursor' | MacPurpose): Buffer[] {
    let derived = this.derived.get(purpose);
    if (!derived) {
      derived = this.keys.map(({ bytes }) =>
        Buffer.from(hkdfSync('sha256', bytes, Buffer.alloc(0), `works-api/${purpose}`, 32)),
      );
      this.derived.set(purpose, derived);
    }
    return derived;
  }

  private readonly derived = new Map<string, Buffer[]>();

  /**
   * An HMAC-SHA256 of `data` for `purpose`, with the current key's derived key: a value the service hands out and
   * later checks without storing it (a stop link). `macMatches` accepts one made with any key, so a rotation does
   * not break what was handed out before it while the old key is kept.
   */
  mac(purpose: MacPurpose, data: Buffer): Buffer {
    return createHmac('sha256', this.derivedKeys(purpose)[0]!).update(data).digest();
  }

  /** Whether `mac` (possibly truncated, at least 16 bytes) is `data`'s for `purpose` under one of the keys. */
  macMatches(purpose: MacPurpose, data: Buffer, mac: Buffer): boolean {
    if (mac.length < 16) return false;
    return this.derivedKeys(purpose).some((key) => {
      const expected = createHmac('sha256', key).update(data).digest().subarray(0, mac.length);
      return timingSafeEqual(expected, mac);
    });
  }

  /** Re-sealed at start-up unless it is in the row-bound form and sealed with the sealing key. */
  sealedWithCurrentKey(value: string): boolean {
    return value.startsWith(`${PREFIX}${this.sealingKeyId}:`);
  }
}

/** A sealed value that does not open where it is: moved from another row or column, or altered. */
export class SealedValueError extends Error {
  override name = 'SealedValueError';
}

/** True for a sealed value, in either form. */
export const isSealed = (value: string): boolean => value.startsWith(PREFIX) || value.startsWith(LEGACY_PREFIX);

/** The key id a sealed value names, or null for plaintext. */
export const keyIdOfSealed = (value: string): string | null =>
  isSealed(value) ? (value.slice(PREFIX.length).split(':')[0] ?? null) : null;

/** SQL LIKE patterns: a value sealed in either form (for dumps), and one in the row-bound form with a given key. */
export const SEALED_LIKE = 'sealed:v_:%';
export const sealedWithKeyLike = (keyId: string): string => `${PREFIX}${keyId}:%`;

/**
 * The embedded database's key, when ENCRYPTION_KEYS is unset: read from `<dataDir>.key`, or made on the first
 * start (mode 0600). Beside the folder, not in it, so that a copy of the folder alone carries no key.
 */
export function pgliteKeyFile(dataDir: string): { file: string; key: Buffer; created: boolean } {
  const file = `${dataDir.replace(/[/\\]+$/, '')}.key`;
  if (existsSync(file)) {
    const [key] = parseEncryptionKeys(readFileSync(file, 'utf8'));
    return { file, key: key!, created: false };
  }
  const text = newEncryptionKey();
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${text}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return { file, key: Buffer.from(text, 'base64'), created: true };
}

/** The keys that seal and open a database's secrets, or undefined for PostgreSQL without ENCRYPTION_KEYS. */
export function secretBoxFor(target: DatabaseTarget): SecretBox | undefined {
  if (target.encryptionKeys?.length) return new SecretBox(target.encryptionKeys);
  if (target.kind === 'postgres') return undefined;
  if (target.dataDir) return new SecretBox([pgliteKeyFile(target.dataDir).key]);
  return new SecretBox([Buffer.from(newEncryptionKey(), 'base64')]); // in memory: the data dies with the process
}
