import {
  escapeHtml,
  formatDue,
  renderInvitationMail,
  renderRequestMail,
  type RequestMailInput,
  shorten,
} from './render';

const input: RequestMailInput = {
  kind: 'request',
  recipient: { email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper' },
  sender: { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' },
  tenantName: 'Acme Research',
  workName: 'Annual report 2026',
  title: 'Confirm Q3 figures',
  message: 'Please confirm the figures in section 3.',
  dueAt: new Date('2026-12-01T17:00:00.000Z'),
  link: 'https://works.example.com/r/abc',
  linkExpiresAt: new Date('2026-12-22T10:30:00.000Z'),
  stopLink: 'https://works.example.com/stop/xyz',
};

describe('request emails', () => {
  it('carry the sender, the tenant, the work, the title, the message, the due date and both links in both parts', () => {
    const mail = renderRequestMail(input);
    expect(mail.to).toBe('grace@example.com');
    for (const part of [mail.text, mail.html]) {
      for (const expected of [
        'Ada Lovelace',
        'Acme Research',
        'Annual report 2026',
        'Confirm Q3 figures',
        'Please confirm the figures in section 3.',
        'Tuesday 1 December 2026, 17:00 UTC',
        'https://works.example.com/r/abc',
        'works until Tuesday 22 December 2026, 10:30 UTC',
        'https://works.example.com/stop/xyz',
      ])
        expect(part).toContain(expected);
    }
    expect(mail.html).toContain('<a href="https://works.example.com/r/abc"');
    expect(mail.html).toContain(
      '<a href="https://works.example.com/stop/xyz">Stop emails from "Acme Research" or from works-api</a>',
    );
    expect(mail.headers).toEqual({
      'List-Unsubscribe': '<https://works.example.com/stop/xyz>',
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    });
  });

  it('say in our words who sent it and from which tenant, and keep what the sender wrote out of the subject', () => {
    const mail = renderRequestMail({ ...input, title: 'Your account is suspended: call +1 555 0100 now' });
    expect(mail.subject).toBe('Ada Lovelace of "Acme Research" sent you a request');
    expect(mail.subject).not.toContain('suspended');
    // The title is in the body, as a quotation of what the sender wrote.
    expect(mail.text).toContain(
      'They wrote:\n\n> Your account is suspended: call +1 555 0100 now\n>\n> Please confirm',
    );
    expect(mail.html).toMatch(/<blockquote[^>]*>\s*<p[^>]*>Your account is suspended: call \+1 555 0100 now<\/p>/);
    expect(renderRequestMail({ ...input, kind: 'reminder' }).subject).toBe(
      'Reminder: Ada Lovelace of "Acme Research" is waiting for your answer',
    );
  });

  it('shorten long names in the subject, so that a tenant name cannot carry a message there', () => {
    const tenantName = `Security team: your mailbox is full, log in at evil.example to keep it ${'x'.repeat(100)}`;
    const mail = renderRequestMail({ ...input, tenantName });
    expect(mail.subject).toBe(`Ada Lovelace of "${[...tenantName].slice(0, 39).join('')}…" sent you a request`);
    expect(mail.text).toContain(tenantName);
    expect(shorten('😀'.repeat(41))).toBe(`${'😀'.repeat(39)}…`);
    expect(shorten('short')).toBe('short');
  });

  it('escape what the sender wrote in the HTML part', () => {
    const mail = renderRequestMail({
      ...input,
      title: '<script>alert(1)</script>',
      message: '<a href="https://evil.example">click</a> & "quotes"',
      workName: "<img src=x onerror='x'>",
      tenantName: '<b>Acme</b>',
    });
    expect(mail.html).not.toContain('<script>');
    expect(mail.html).not.toContain('<a href="https://evil.example">');
    expect(mail.html).not.toContain('<img');
    expect(mail.html).not.toContain('<b>');
    expect(mail.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(mail.html).toContain(
      '&lt;a href=&quot;https://evil.example&quot;&gt;click&lt;/a&gt; &amp; &quot;quotes&quot;',
    );
    // The text part is plain text: shown as written.
    expect(mail.text).toContain('<script>alert(1)</script>');
  });

  it('say "Reminder" and leave out what is missing', () => {
    const mail = renderRequestMail({
      ...input,
      kind: 'reminder',
      message: '',
      recipient: { ...input.recipient, firstName: '' },
      sender: { ...input.sender, firstName: '', lastName: '' },
    });
    expect(mail.subject).toBe('Reminder: ada@example.com of "Acme Research" is waiting for your answer');
    expect(mail.text.startsWith('Hello,\n')).toBe(true);
    expect(mail.text).toContain('ada@example.com (ada@example.com), of "Acme Research", is still waiting');
    expect(mail.text).toContain('due Tuesday 1 December 2026, 17:00 UTC');
  });

  it('escape every HTML-special character', () => {
    expect(escapeHtml(`<>&"'`)).toBe('&lt;&gt;&amp;&quot;&#39;');
    expect(formatDue(new Date('2026-01-05T08:30:00.000Z'))).toBe('Monday 5 January 2026, 08:30 UTC');
  });
});

describe('invitation emails', () => {
  const invitation = {
    to: 'grace@example.com',
    invitee: { firstName: 'Grace' },
    inviter: { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' },
    tenantName: 'Acme Research',
    role: 'admin' as const,
    expiresAt: new Date('2026-12-06T11:00:00.000Z'),
    link: 'https://works.example.com/console/invitations',
    stopLink: 'https://works.example.com/stop/xyz',
  };

  it('say who invited, to which tenant, link to the console, and carry the stop link', () => {
    const mail = renderInvitationMail(invitation);
    expect(mail.subject).toBe('Ada Lovelace invited you to join "Acme Research" on works-api');
    expect(mail.text).toContain('Ada Lovelace (ada@example.com) invited you to join "Acme Research" as an admin.');
    for (const part of [mail.text, mail.html])
      for (const expected of [
        'https://works.example.com/console/invitations',
        'Sunday 6 December 2026, 11:00 UTC',
        'https://works.example.com/stop/xyz',
      ])
        expect(part).toContain(expected);
    expect(mail.headers?.['List-Unsubscribe']).toBe('<https://works.example.com/stop/xyz>');
  });
});
