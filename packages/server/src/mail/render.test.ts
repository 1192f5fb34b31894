import { escapeHtml, formatDue, renderRequestMail, type RequestMailInput } from './render';

const input: RequestMailInput = {
  kind: 'request',
  recipient: { email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper' },
  sender: { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' },
  workName: 'Annual report 2026',
  title: 'Confirm Q3 figures',
  message: 'Please confirm the figures in section 3.',
  dueAt: new Date('2026-12-01T17:00:00.000Z'),
  link: 'https://works.example.com/r/abc',
};

describe('request emails', () => {
  it('carry the sender, the work, the title, the message, the due date and the link in both parts', () => {
    const mail = renderRequestMail(input);
    expect(mail.to).toBe('grace@example.com');
    expect(mail.subject).toBe('Ada Lovelace asks you: Confirm Q3 figures');
    for (const part of [mail.text, mail.html]) {
      for (const expected of [
        'Ada Lovelace',
        'Annual report 2026',
        'Confirm Q3 figures',
        'Please confirm the figures in section 3.',
        'Tuesday 1 December 2026, 17:00 UTC',
        'https://works.example.com/r/abc',
      ])
        expect(part).toContain(expected);
    }
    expect(mail.html).toContain('<a href="https://works.example.com/r/abc"');
  });

  it('escape what the sender wrote in the HTML part', () => {
    const mail = renderRequestMail({
      ...input,
      title: '<script>alert(1)</script>',
      message: '<a href="https://evil.example">click</a> & "quotes"',
      workName: "<img src=x onerror='x'>",
    });
    expect(mail.html).not.toContain('<script>');
    expect(mail.html).not.toContain('<a href="https://evil.example">');
    expect(mail.html).not.toContain('<img');
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
    expect(mail.subject).toBe('Reminder: Confirm Q3 figures');
    expect(mail.text.startsWith('Hello,\n')).toBe(true);
    expect(mail.text).toContain('ada@example.com is still waiting');
    expect(mail.text).toContain('due Tuesday 1 December 2026, 17:00 UTC');
  });

  it('escape every HTML-special character', () => {
    expect(escapeHtml(`<>&"'`)).toBe('&lt;&gt;&amp;&quot;&#39;');
    expect(formatDue(new Date('2026-01-05T08:30:00.000Z'))).toBe('Monday 5 January 2026, 08:30 UTC');
  });
});
