import { mailCapRefusal, secondsUntilNextUtcDay, utcDay } from './caps';

const caps = {
  emailsPerRecipientPerDay: 20,
  emailsPerTenantPerDay: 1000,
  emailsPerAddressPerDay: 50,
  emailsPerSenderPerDay: 1500,
};

describe('the daily email caps', () => {
  it('count per UTC day, and say how long until the next one', () => {
    expect(utcDay(new Date('2026-11-26T23:59:59.999Z'))).toBe('2026-11-26');
    expect(utcDay(new Date('2026-11-27T00:00:00.000Z'))).toBe('2026-11-27');
    expect(secondsUntilNextUtcDay(new Date('2026-11-26T23:59:00.000Z'))).toBe(60);
    expect(secondsUntilNextUtcDay(new Date('2026-11-26T00:00:00.000Z'))).toBe(86_400);
    expect(secondsUntilNextUtcDay(new Date('2026-12-31T23:59:59.900Z'))).toBe(1);
  });

  it("turn the function's SQLSTATEs into 429s, wherever the driver or Prisma put them, and nothing else", () => {
    const now = new Date('2026-11-26T23:00:00.000Z');
    const direct = mailCapRefusal({ code: 'WA001' }, caps, now);
    expect([direct?.code, direct?.retryAfterSeconds]).toEqual(['recipient_email_limit_reached', 3600]);
    const inCause = mailCapRefusal({ cause: { originalCode: 'WA002' } }, caps, now);
    expect(inCause?.code).toBe('tenant_email_budget_exhausted');
    expect(inCause?.detail).toBe('This tenant has sent 1000 emails today, the most allowed; retry after Retry-After.');
    const inTransaction = { code: 'P2010', meta: { driverAdapterError: { cause: { originalCode: 'WA001' } } } };
    expect(mailCapRefusal(inTransaction, caps, now)?.code).toBe('recipient_email_limit_reached');
    // Which cap: the address across the service (WA003), the sending user across their tenants (WA004).
    const address = mailCapRefusal({ code: 'WA003' }, caps, now);
    expect([address?.code, address?.retryAfterSeconds]).toEqual(['address_email_limit_reached', 3600]);
    expect(address?.detail).toContain('50 emails by this service today (from every tenant');
    const sender = mailCapRefusal({ cause: { code: 'WA004' } }, caps, now);
    expect([sender?.code, sender?.retryAfterSeconds]).toEqual(['sender_email_budget_exhausted', 3600]);
    expect(sender?.detail).toBe(
      'You have caused 1500 emails today (in all your tenants), the most allowed; retry after Retry-After.',
    );
    for (const other of [{ code: '23505' }, new Error('WA001'), { code: 'toString' }, null, 'WA001'])
      expect(mailCapRefusal(other, caps, now)).toBeUndefined();
  });
});
