import { randomBytes } from 'node:crypto';
import { SecretBox } from '@works-api/prisma';
import { recipientOfStopLink, stopLinkToken } from './stop-links';

const key = () => randomBytes(32);
const id = '0193a1c2-5b6c-7d8e-9f01-2a3b4c5d6e7f';

describe('stop links', () => {
  it('name the recipient row, in 43 base64url characters, and open only under our keys', () => {
    const box = new SecretBox([key()]);
    const token = stopLinkToken(box, id);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(recipientOfStopLink(box, token)).toBe(id);
    expect(recipientOfStopLink(new SecretBox([key()]), token)).toBeNull();
  });

  it('cannot be made up or changed: another id, a changed MAC, another shape are refused', () => {
    const box = new SecretBox([key()]);
    const token = Buffer.from(stopLinkToken(box, id), 'base64url');
    const otherId = Buffer.from(token);
    otherId[0]! ^= 1;
    const otherMac = Buffer.from(token);
    otherMac[31]! ^= 1;
    for (const forged of [otherId, otherMac]) expect(recipientOfStopLink(box, forged.toString('base64url'))).toBeNull();
    for (const shape of ['', 'x'.repeat(42), 'x'.repeat(44), `${'x'.repeat(42)}=`])
      expect(recipientOfStopLink(box, shape)).toBeNull();
  });

  it('keep working after a key rotation while the old key is kept', () => {
    const [oldKey, newKey] = [key(), key()];
    const token = stopLinkToken(new SecretBox([oldKey]), id);
    expect(recipientOfStopLink(new SecretBox([newKey, oldKey]), token)).toBe(id);
    expect(recipientOfStopLink(new SecretBox([newKey]), token)).toBeNull();
  });
});
