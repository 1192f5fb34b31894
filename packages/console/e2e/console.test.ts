import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createClient, unwrap } from '@works-api/client';
import {
  type AxeViolation,
  axeScan,
  DESKTOP,
  launchChromium,
  PHONE,
  screenshot,
  watchForErrors,
} from './support/browser';
import { type RunningServer, startServer, type TestUser } from './support/server';
import { startSmtpCatcher } from './support/smtp-catcher';

/**
 * The console in a real Chromium against the real server (built, on a random loopback port, on PGlite unless
 * DATABASE_URL is set): every click goes through the console's production build, its CSP and the API.
 */
let server: RunningServer;
let browser: Browser;
const contexts: BrowserContext[] = [];
/** The errors each page of the current test reported (see watchForErrors). */
let pageErrors: string[][] = [];
/** Every axe result, by page, printed at the end (the report quotes it). */
const axeResults: Record<string, AxeViolation[]> = {};

beforeAll(async () => {
  [server, browser] = await Promise.all([startServer(), launchChromium()]);
}, 120_000);

afterAll(async () => {
  await Promise.all(contexts.map((context) => context.close()));
  await browser?.close();
  await server?.stop();
  const summary = Object.entries(axeResults).map(
    ([name, violations]) =>
      `  ${name}: ${violations.length === 0 ? 'no violations' : violations.map((v) => `${v.id} (${v.impact}, ${v.nodes})`).join(', ')}`,
  );
  if (summary.length > 0) console.log(`axe-core results:\n${summary.join('\n')}`);
});

afterEach(() => {
  // A CSP violation, an uncaught error or a React warning fails the test that caused it. Chromium also logs every
  // 4xx the app asked for; those are expected (the tests provoke them) and the app shows them.
  const unexpected = pageErrors
    .flat()
    .filter((error) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(error));
  pageErrors = [];
  expect(unexpected).toEqual([]);
});

async function newPage(viewport = DESKTOP): Promise<Page> {
  const context = await browser.newContext({ viewport });
  contexts.push(context);
  const page = await context.newPage();
  pageErrors.push(watchForErrors(page));
  return page;
}

/**
 * Signs `user` in as a person does: their address on the sign-in page, then the emailed link, which the dev mailbox
 * prints in the server's log (as the README says); then opens `path`.
 */
async function signIn(
  page: Page,
  user: { email: string },
  path = '/console',
  on: RunningServer = server,
): Promise<void> {
  await page.goto(`${on.baseUrl}/console`);
  const link = await emailedLink(page, user.email, on);
  await page.goto(link);
  await expectVisible(page.getByTestId('signed-in-as').filter({ hasText: user.email }));
  if (path !== '/console') await page.goto(on.baseUrl + path);
  await expectVisible(page.getByTestId('signed-in-as').filter({ hasText: user.email }));
}

/** Asks for a sign-in email on the sign-in page `page` shows, and reads its link from the server's log. */
async function emailedLink(page: Page, email: string, on: RunningServer = server): Promise<string> {
  const before = signInLinksIn(on.output(), email).length;
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
  await expectVisible(page.getByText('an email is on its way'));
  const deadline = Date.now() + 15_000;
  for (;;) {
    const links = signInLinksIn(on.output(), email);
    if (links.length > before) return links.at(-1)!;
    if (Date.now() > deadline) throw new Error(`no sign-in link for ${email} in the server's log`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The sign-in links the dev mailbox printed for `email`, oldest first. */
function signInLinksIn(output: string, email: string): string[] {
  return output
    .split('\n')
    .filter((line) => line.includes(`"to":"${email}"`))
    .flatMap((line) => /"signInLink":"([^"]+)"/.exec(line)?.[1] ?? []);
}

/** Opens a Mailbox email (its `<details>`) unless it is open already (only the newest is, at first). */
async function openMail(mail: ReturnType<Page['locator']>): Promise<void> {
  await expectVisible(mail.locator('summary'));
  if ((await mail.locator('details').first().getAttribute('open')) === null)
    await mail.locator('summary').first().click();
}

async function expectVisible(locator: ReturnType<Page['locator']>): Promise<void> {
  await locator.first().waitFor({ state: 'visible', timeout: 15_000 });
}

/** Waits until a form control holds `value` (e.g. once a reload has brought the current data). */
async function expectValue(locator: ReturnType<Page['locator']>, value: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  let current = await locator.inputValue();
  while (current !== value) {
    if (Date.now() > deadline) throw new Error(`expected the value ${value}, still ${current}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    current = await locator.inputValue();
  }
}

/** axe on the page as it is now, at 1,400 px and at 375 px, with a screenshot of each. */
async function checkPage(page: Page, name: string): Promise<void> {
  for (const viewport of [DESKTOP, PHONE]) {
    await page.setViewportSize(viewport);
    await screenshot(page, name);
    const violations = await axeScan(page);
    axeResults[`${name} at ${viewport.width} px`] = violations;
    expect(violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')).toEqual(
      [],
    );
  }
  await page.setViewportSize(DESKTOP);
}

const heading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name });

describe('the console', () => {
  it('signs in, creates a tenant, adds a member, creates a work, sends, confirms and validates a request, and shows its timeline', async () => {
    const ada = await server.createUser('Ada');
    const grace = await server.createUser('Grace');
    const page = await newPage();

    await page.goto(`${server.baseUrl}/console`);
    await expectVisible(page.getByLabel('Email', { exact: true }));
    // Never an API key in a browser.
    expect(await page.getByLabel('API key').count()).toBe(0);
    await checkPage(page, 'sign-in');
    const link = await emailedLink(page, ada.email);
    await checkPage(page, 'sign-in-sent');
    await page.goto(link);
    await expectVisible(page.getByTestId('signed-in-as').filter({ hasText: 'Ada Lovelace' }));
    // The link's token left the address bar; nothing of a credential is in the page's storage.
    expect(page.url()).not.toContain('token');
    expect(
      await page.evaluate(() => [Object.keys(sessionStorage), Object.keys(localStorage), document.cookie]),
    ).toEqual([[], [], '']);

    await expectVisible(page.getByText('You are not a member of any tenant yet'));
    await page.getByLabel('Name', { exact: true }).fill('Acme Research');
    await page.getByRole('button', { name: 'Create tenant' }).click();
    await expectVisible(heading(page, 'Acme Research'));
    await expectVisible(page.getByText('No works yet'));

    // Membership is by consent: an existing account's email and an unknown one are both invited, and the form
    // says so; no member row appears until the person accepts.
    await page.getByLabel('Email', { exact: true }).fill(grace.email);
    await page.getByLabel('Role', { exact: true }).selectOption('admin');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await expectVisible(page.getByText(`Invitation sent to ${grace.email}.`));
    expect(await page.getByLabel(`Role of ${grace.email}`).count()).toBe(0);
    const newcomer = `newcomer-${Date.now()}@example.com`;
    await page.getByLabel('Email', { exact: true }).fill(newcomer);
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await expectVisible(page.getByText(`Invitation sent to ${newcomer}.`));
    expect(await page.getByLabel(`Role of ${newcomer}`).count()).toBe(0);

    await page.getByLabel('Work name').fill('Annual report 2026');
    await page.getByLabel('Description').fill('Figures and sign-off.');
    await page.getByRole('button', { name: 'Create work' }).click();
    await expectVisible(heading(page, 'Annual report 2026'));
    await expectVisible(page.getByText('No requests yet.'));

    await page.getByLabel('Title').fill('Confirm Q3 figures');
    await page.getByLabel('Message').fill('Please confirm the figures in section 3.');
    await page.getByLabel('Recipient email').fill('katherine@example.com');
    await page.getByLabel('Recipient first name').fill('Katherine');
    await page.getByLabel('Recipient last name').fill('Johnson');
    // A due date a month ahead, as the datetime-local field takes it (a due date in the past is refused).
    await page.getByLabel('Due').fill(new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 16));
    await page.getByRole('button', { name: 'Send request' }).click();
    await expectVisible(heading(page, 'Confirm Q3 figures'));
    await expectVisible(page.locator('.subtitle').getByText('pending'));
    // Only what a pending request allows.
    expect(await page.getByRole('button', { name: 'Validate', exact: true }).count()).toBe(0);
    await expectVisible(page.getByRole('button', { name: 'Validate early' }));

    await page.getByLabel('Answer').fill('The figures are correct.');
    await page.getByRole('button', { name: 'Confirm', exact: true }).click();
    await expectVisible(page.locator('.subtitle').getByText('confirmed'));
    await page.getByRole('button', { name: 'Validate', exact: true }).click();
    await expectVisible(page.locator('.subtitle').getByText('validated'));
    await expectVisible(page.getByText('A validated request takes no further action.'));

    const timeline = page.getByRole('list', { name: 'Events, newest first' });
    await expectVisible(timeline.getByText('Validated: confirmed → validated'));
    expect(await timeline.locator('.event-title').allTextContents()).toEqual([
      'Validated: confirmed → validated',
      'Confirmed: pending → confirmed',
      'Sent to katherine@example.com',
    ]);
    await expectVisible(timeline.getByText('“The figures are correct.”'));
    await expectVisible(page.getByText('The figures are correct.', { exact: true }));
    await checkPage(page, 'request');

    // The other main pages, as they look with this data.
    await page.getByRole('link', { name: 'Annual report 2026' }).click();
    await expectVisible(page.getByRole('link', { name: 'Confirm Q3 figures' }));
    await checkPage(page, 'work');
    await page.getByRole('link', { name: 'Acme Research' }).click();
    await expectVisible(page.getByRole('link', { name: 'Annual report 2026' }));
    await checkPage(page, 'tenant');
    await page.getByRole('link', { name: 'Tenants' }).first().click();
    await expectVisible(page.getByRole('link', { name: 'Acme Research' }));
    await checkPage(page, 'tenants');
    await page.getByRole('link', { name: 'API keys' }).click();
    await expectVisible(page.getByText('Default key'));
    await checkPage(page, 'api-keys');
    await page.getByRole('link', { name: 'Sessions' }).click();
    await expectVisible(page.getByText('this browser'));
    await checkPage(page, 'sessions');

    // A reload of a client-side route gets the app (the server's fallback), still signed in (the cookie).
    await page.reload();
    await expectVisible(heading(page, 'Sessions'));

    expect(server.output()).not.toContain(ada.apiKey);
  });

  it('reads responses that gained properties it does not know: every page renders, no error', async () => {
    const ada = await server.createUser('Ada');
    const { tenant } = unwrap(await ada.api.createTenant({ body: { name: 'Newer Server Ltd' } }));
    const { work } = unwrap(
      await ada.api.createWork({ params: { path: { tenant_id: tenant.id } }, body: { name: 'Forward compatible' } }),
    );
    const { request } = unwrap(
      await ada.api.createRequest({
        params: { path: { tenant_id: tenant.id, work_id: work.id } },
        body: { title: 'Read me anyway', recipient: { email: 'newer@example.com' } },
      }),
    );
    const page = await newPage();
    // A server a version ahead: every object of every JSON answer carries properties this console has never seen.
    let widened = 0;
    const widen = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(widen);
      if (typeof value !== 'object' || value === null) return value;
      widened++;
      return {
        ...Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, widen(inner)])),
        addedLater: { note: 'a field from a newer server', list: [1, 2] },
        colour: 'teal',
      };
    };
    await page.route('**/v1/**', async (route) => {
      const response = await route.fetch();
      const type = response.headers()['content-type'] ?? '';
      if (!/json/.test(type)) return route.fulfill({ response });
      return route.fulfill({ response, body: JSON.stringify(widen(await response.json())) });
    });
    await signIn(page, ada, '/console');
    await expectVisible(page.getByRole('link', { name: 'Newer Server Ltd' }));
    await page.getByRole('link', { name: 'Newer Server Ltd' }).click();
    await expectVisible(page.getByRole('link', { name: 'Forward compatible' }));
    await page.getByRole('link', { name: 'Forward compatible' }).click();
    await expectVisible(page.getByRole('link', { name: 'Read me anyway' }));
    await page.getByRole('link', { name: 'Read me anyway' }).click();
    await expectVisible(heading(page, 'Read me anyway'));
    await expectVisible(page.locator('.subtitle').getByText('pending'));
    await page.getByLabel('Answer').fill('Fine.');
    await page.getByRole('button', { name: 'Confirm', exact: true }).click();
    await expectVisible(page.locator('.subtitle').getByText('confirmed'));
    // The tenant-wide views and the search read the same widened answers.
    await page.goto(`${server.baseUrl}/console/tenants/${tenant.id}/requests`);
    await expectVisible(page.getByRole('link', { name: 'Read me anyway' }));
    await page.goto(`${server.baseUrl}/console/tenants/${tenant.id}/events`);
    await expectVisible(page.getByText('Request confirmed ·'));
    expect(widened).toBeGreaterThan(20);
    expect(request.status).toBe('pending');
    await page.unrouteAll({ behavior: 'ignoreErrors' });
  });

  it('shows "changed by someone else" when another browser changed the request first, and reloads it', async () => {
    const ada = await server.createUser('Ada');
    const { tenant } = unwrap(await ada.api.createTenant({ body: { name: 'Conflicts Ltd' } }));
    const { work } = unwrap(
      await ada.api.createWork({ params: { path: { tenant_id: tenant.id } }, body: { name: 'Contract' } }),
    );
    const { request } = unwrap(
      await ada.api.createRequest({
        params: { path: { tenant_id: tenant.id, work_id: work.id } },
        body: { title: 'Sign the contract', recipient: { email: 'bob@example.com' } },
      }),
    );
    const requestPath = `/console/tenants/${tenant.id}/works/${work.id}/requests/${request.id}`;

    const first = await newPage();
    await signIn(first, ada, requestPath);
    await expectVisible(heading(first, 'Sign the contract'));
    await expectVisible(first.getByRole('button', { name: 'Confirm', exact: true }));

    const second = await newPage();
    await signIn(second, ada, requestPath);
    await second.getByLabel('Answer').fill('Signed by Bob.');
    await second.getByRole('button', { name: 'Confirm', exact: true }).click();
    await expectVisible(second.locator('.subtitle').getByText('confirmed'));

    // The first page still shows it pending; its confirm carries the old ETag and is refused, not applied twice.
    await first.getByLabel('Answer').fill('Signed, says Carol.');
    await first.getByRole('button', { name: 'Confirm', exact: true }).click();
    const alert = first.getByRole('alert').filter({ hasText: 'Changed by someone else' });
    await expectVisible(alert);
    await screenshot(first, 'conflict');
    await alert.getByRole('button', { name: 'Reload request' }).click();
    await expectVisible(first.locator('.subtitle').getByText('confirmed'));
    await expectVisible(first.getByText('Signed by Bob.', { exact: true }));
    expect(await first.getByRole('alert').filter({ hasText: 'Changed by someone else' }).count()).toBe(0);
    const { request: stored } = unwrap(
      await ada.api.getRequest({ params: { path: { tenant_id: tenant.id, work_id: work.id, id: request.id } } }),
    );
    expect(stored.answer).toBe('Signed by Bob.');

    // An edit of a work changed meanwhile is refused the same way (If-Match on PATCH).
    await first.goto(`${server.baseUrl}/console/tenants/${tenant.id}/works/${work.id}`);
    await expectVisible(first.getByLabel('Work name'));
    unwrap(
      await ada.api.updateWork({
        params: { path: { tenant_id: tenant.id, work_id: work.id } },
        body: { name: 'Contract (v2)' },
      }),
    );
    await first.getByLabel('Description').fill('My edit');
    await first.getByRole('button', { name: 'Save changes' }).click();
    await expectVisible(first.getByRole('alert').filter({ hasText: 'Changed by someone else' }));
    await first.getByRole('button', { name: 'Reload work' }).click();
    await expectVisible(heading(first, 'Contract (v2)'));
    const { work: storedWork } = unwrap(
      await ada.api.getWork({ params: { path: { tenant_id: tenant.id, work_id: work.id } } }),
    );
    expect(storedWork.description).toBe('');
  });

  it('reports a role changed in another browser as "changed by someone else", never overwriting it', async () => {
    const ada = await server.createUser('Ada');
    const grace = await server.createUser('Grace');
    const bob = await server.createUser('Bob');
    const { tenant } = unwrap(await ada.api.createTenant({ body: { name: 'Concurrent Roles' } }));
    const tenantPath = { tenant_id: tenant.id };
    await join(ada, tenant.id, grace, 'admin');
    const member = await join(ada, tenant.id, bob, 'member');
    const bobPath = { ...tenantPath, user_id: member.user.id };
    const bobsRole = async () => unwrap(await ada.api.getMember({ params: { path: bobPath } })).member.role;
    const isRoleChange = (request: { method(): string; url(): string }) =>
      request.method() === 'PATCH' && request.url().endsWith(`/members/${member.user.id}`);

    // Ada's page shows Bob as a member; every role change it sends is recorded with its If-Match.
    const first = await newPage();
    const sentFromFirst: Array<string | undefined> = [];
    first.on('request', (request) => {
      if (isRoleChange(request)) sentFromFirst.push(request.headers()['if-match']);
    });
    await signIn(first, ada, `/console/tenants/${tenant.id}`);
    const firstRow = first.getByRole('form', { name: `Membership of ${bob.email}` });
    await expectVisible(firstRow);
    expect(await first.getByLabel(`Role of ${bob.email}`).inputValue()).toBe('member');

    // Meanwhile Grace, in another browser, makes Bob an admin.
    const second = await newPage();
    await signIn(second, grace, `/console/tenants/${tenant.id}`);
    await second.getByLabel(`Role of ${bob.email}`).selectOption('admin');
    const granted = second.waitForResponse((response) => isRoleChange(response.request()));
    await second
      .getByRole('form', { name: `Membership of ${bob.email}` })
      .getByRole('button', { name: 'Change role' })
      .click();
    expect((await granted).status()).toBe(200);
    expect(await bobsRole()).toBe('admin');

    // Ada, still seeing "member", makes Bob an owner: the console reads Bob first, sees the role it shows is
    // stale, and says so instead of overwriting Grace's change. Nothing is sent.
    await first.getByLabel(`Role of ${bob.email}`).selectOption('owner');
    await firstRow.getByRole('button', { name: 'Change role' }).click();
    const conflict = first.getByRole('alert').filter({ hasText: 'Changed by someone else' });
    await expectVisible(conflict);
    await screenshot(first, 'member-conflict');
    expect(sentFromFirst).toEqual([]);
    expect(await bobsRole()).toBe('admin');
    await conflict.getByRole('button', { name: 'Reload member' }).click();
    await expectValue(first.getByLabel(`Role of ${bob.email}`), 'admin');
    expect(await first.getByRole('alert').filter({ hasText: 'Changed by someone else' }).count()).toBe(0);

    // A change that lands between the console's read and its PATCH: the If-Match it read is stale, so 412, shown
    // the same way, and again nothing is overwritten.
    await first.route(
      (url) => url.pathname.endsWith(`/members/${member.user.id}`),
      async (route) => {
        if (route.request().method() === 'PATCH') {
          unwrap(await grace.api.updateMember({ params: { path: bobPath }, body: { role: 'member' } }));
        }
        await route.continue();
      },
    );
    await first.getByLabel(`Role of ${bob.email}`).selectOption('owner');
    const refused = first.waitForResponse((response) => isRoleChange(response.request()));
    await firstRow.getByRole('button', { name: 'Change role' }).click();
    expect((await refused).status()).toBe(412);
    await expectVisible(first.getByRole('alert').filter({ hasText: 'Changed by someone else' }));
    expect(sentFromFirst).toHaveLength(1);
    expect(sentFromFirst[0]).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(await bobsRole()).toBe('member');
    await first.unroute((url) => url.pathname.endsWith(`/members/${member.user.id}`));
    await first.getByRole('button', { name: 'Reload member' }).click();
    await expectValue(first.getByLabel(`Role of ${bob.email}`), 'member');

    // With nothing changed meanwhile, the role change goes through, with If-Match.
    await first.getByLabel(`Role of ${bob.email}`).selectOption('admin');
    const applied = first.waitForResponse((response) => isRoleChange(response.request()));
    await firstRow.getByRole('button', { name: 'Change role' }).click();
    expect((await applied).status()).toBe(200);
    expect(sentFromFirst).toHaveLength(2);
    expect(sentFromFirst[1]).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(sentFromFirst[1]).not.toBe(sentFromFirst[0]);
    expect(await bobsRole()).toBe('admin');
  });

  it('shows a member without rights no admin controls, and a 403 plainly when rights go away under an open page', async () => {
    const ada = await server.createUser('Ada');
    const grace = await server.createUser('Grace');
    const { tenant } = unwrap(await ada.api.createTenant({ body: { name: 'Roles Inc' } }));
    const tenantPath = { tenant_id: tenant.id };
    const member = await join(ada, tenant.id, grace, 'admin');
    const { work } = unwrap(await ada.api.createWork({ params: { path: tenantPath }, body: { name: 'Handbook' } }));

    const page = await newPage();
    await signIn(page, grace, `/console/tenants/${tenant.id}`);
    await expectVisible(page.getByRole('heading', { name: 'Rename' }));
    // Ada demotes Grace while her page is open: the rename she then sends is refused, and she is told why.
    unwrap(
      await ada.api.updateMember({
        params: { path: { ...tenantPath, user_id: member.user.id } },
        body: { role: 'member' },
      }),
    );
    await page.getByLabel('Tenant name').fill('Roles Incorporated');
    await page.getByRole('button', { name: 'Rename' }).click();
    const forbidden = page.getByRole('alert').filter({ hasText: 'Forbidden' });
    await expectVisible(forbidden);
    expect(await forbidden.textContent()).toContain('This operation needs the owner or admin role.');

    await page.reload();
    await expectVisible(page.getByText('Only owners and admins invite, change or remove members.'));
    expect(await page.getByRole('heading', { name: 'Rename' }).count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'Invite a member' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Remove' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Change role' }).count()).toBe(0);
    // What a member may do is there: create works.
    await expectVisible(page.getByRole('button', { name: 'Create work' }));
    await checkPage(page, 'tenant-as-member');

    await page.getByRole('link', { name: 'Handbook' }).click();
    await expectVisible(heading(page, 'Handbook'));
    await expectVisible(page.getByText('Only owners and admins edit, discard or restore works.'));
    expect(await page.getByRole('button', { name: 'Save changes' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Discard work' }).count()).toBe(0);
    await expectVisible(page.getByRole('button', { name: 'Send request' }));
    void work;
  });

  it('creates once on a double click, and shows field errors next to their fields', async () => {
    const ada = await server.createUser('Ada');
    const page = await newPage();
    await signIn(page, ada);
    await page.getByLabel('Name', { exact: true }).fill('Clicked Twice');
    await page.getByRole('button', { name: 'Create tenant' }).dblclick();
    await expectVisible(heading(page, 'Clicked Twice'));
    const { tenants } = unwrap(await ada.api.listTenants());
    expect(tenants.edges.map((edge) => edge.node.name)).toEqual(['Clicked Twice']);

    // White space only passes the browser's `required`, not the contract: the server's message is under the field.
    await page.getByLabel('Work name').fill('   ');
    await page.getByRole('button', { name: 'Create work' }).click();
    const field = page.getByLabel('Work name');
    await page.waitForFunction(() => document.querySelector('[aria-invalid="true"]') !== null);
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    const describedBy = (await field.getAttribute('aria-describedby'))!;
    const message = await page.locator(`[id="${describedBy.split(' ').pop()}"]`).textContent();
    expect(message).toMatch(/\S/);
    await expectVisible(page.getByRole('alert').filter({ hasText: 'Invalid request' }));
    await screenshot(page, 'field-error');
  });

  it('pages and filters works, discards and restores one', async () => {
    const ada = await server.createUser('Ada');
    const { tenant } = unwrap(await ada.api.createTenant({ body: { name: 'Many Works' } }));
    const tenantPath = { tenant_id: tenant.id };
    for (let n = 1; n <= 21; n += 1) {
      unwrap(
        await ada.api.createWork({
          params: { path: tenantPath },
          body: { name: `Work ${String(n).padStart(2, '0')}` },
        }),
      );
    }
    const page = await newPage();
    await signIn(page, ada, `/console/tenants/${tenant.id}`);
    await expectVisible(page.getByText('Showing 20 of 21 works'));
    await page.getByRole('button', { name: 'Show more works' }).click();
    await expectVisible(page.getByText('Showing 21 of 21 works'));
    expect(await page.getByRole('button', { name: 'Show more works' }).count()).toBe(0);

    await page.getByRole('link', { name: 'Work 21' }).click();
    await page.getByRole('button', { name: 'Discard work' }).click();
    await page.getByRole('button', { name: 'Yes, discard' }).click();
    await expectVisible(page.getByRole('button', { name: 'Restore work' }));
    await expectVisible(page.getByText('This work is discarded'));
    await page.getByRole('link', { name: 'Many Works' }).click();
    await expectVisible(page.getByText('Showing 20 of 20 works'));
    await page.getByLabel('Show').selectOption('true');
    await expectVisible(page.getByText('Showing 1 of 1 works'));
    await page.getByRole('link', { name: 'Work 21' }).click();
    await page.getByRole('button', { name: 'Restore work' }).click();
    await expectVisible(page.getByRole('button', { name: 'Discard work' }));
    const { works } = unwrap(await ada.api.listWorks({ params: { path: tenantPath, query: { discarded: 'true' } } }));
    expect(works.totalCount).toBe(0);
  });

  it('creates an API key shown once with a copy button, and revokes keys', async () => {
    const ada = await server.createUser('Ada');
    const page = await newPage();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.baseUrl });
    await signIn(page, ada, '/console/api-keys');
    await page.getByLabel('Key name').fill('CI');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secretField = page.getByLabel('Secret');
    await expectVisible(secretField);
    await expectVisible(page.getByText('This is the only time it is shown.'));
    const secret = await secretField.inputValue();
    expect(secret).toMatch(/^wk_/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await expectVisible(page.getByText('Copied to the clipboard.'));
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await screenshot(page, 'new-key');
    await page.getByRole('button', { name: 'I have copied it' }).click();
    expect(await page.getByLabel('Secret').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);

    const ciRow = page.getByRole('listitem').filter({ hasText: 'CI' }).filter({ hasText: 'never used' });
    await ciRow.getByRole('button', { name: 'Revoke' }).click();
    await ciRow.getByRole('button', { name: 'Yes, revoke' }).click();
    await expectVisible(ciRow.getByText(/^revoked/));
    const revoked = createKeyClient(secret);
    expect((await revoked.getMe()).response.status).toBe(401);
    // Revoking keys does not touch the person's session.
    await page.reload();
    await expectVisible(page.getByTestId('signed-in-as').filter({ hasText: ada.email }));
  });

  it('creates a key restricted to one tenant, works:read and an expiry, shown once, that can do only that', async () => {
    const ada = await server.createUser('Ada');
    const grace = await server.createUser('Grace');
    const { tenant } = unwrap(await ada.api.createTenant({ body: { name: 'Reach Ltd' } }));
    const { tenant: other } = unwrap(await ada.api.createTenant({ body: { name: 'Out Of Reach Ltd' } }));
    // A tenant where Ada is only a member: webhooks need an admin.
    const { tenant: graces } = unwrap(await grace.api.createTenant({ body: { name: 'Hopper & Co' } }));
    await join(grace, graces.id, ada, 'member');
    const page = await newPage();
    await signIn(page, ada, '/console/api-keys');
    const form = page.getByRole('region', { name: 'Create a key' });
    const group = (name: string) => form.getByRole('group', { name, exact: true });

    // First a scope her role does not allow in the tenant she picked: the server's 400, beside the scopes.
    await form.getByLabel('Key name').fill('Reporting');
    await form.getByLabel('Only the tenants chosen below').check();
    await group('Your tenants').getByLabel('Hopper & Co').check();
    await form.getByLabel('Only the scopes chosen below').check();
    await group('Webhooks').getByLabel('webhooks:read', { exact: true }).check();
    // A key limited to tenants cannot create tenants, so the form does not offer it.
    expect(await group('Tenants').getByLabel('tenants:create', { exact: true }).isDisabled()).toBe(true);
    await form.getByRole('button', { name: 'Create key' }).click();
    await expectVisible(page.getByRole('alert').filter({ hasText: 'Invalid request' }));
    const scopesGroup = group('Scopes');
    const describedBy = (await scopesGroup.getAttribute('aria-describedby'))!;
    const scopesError = page.locator(`[id="${describedBy.split(' ').pop()}"]`);
    expect(await scopesError.getAttribute('class')).toBe('field-error');
    expect(await scopesError.textContent()).toMatch(/your role allows.*webhooks:read/);
    await checkPage(page, 'api-keys-restricted-error');

    await group('Your tenants').getByLabel('Hopper & Co').uncheck();
    await group('Your tenants').getByLabel('Reach Ltd', { exact: true }).check();
    await group('Webhooks').getByLabel('webhooks:read', { exact: true }).uncheck();
    await group('Works').getByLabel('works:read', { exact: true }).check();
    await form.getByRole('button', { name: '30 days' }).click();
    // The preset is a day 30 days ahead in the browser's time zone; the key stops working at that day's end.
    const [day, endOfDay] = await page.evaluate(() => {
      const date = new Date();
      date.setDate(date.getDate() + 30);
      const value = [date.getFullYear(), date.getMonth() + 1, date.getDate()]
        .map((n) => String(n).padStart(2, '0'))
        .join('-');
      date.setHours(23, 59, 59, 999);
      return [value, date.toISOString()];
    });
    expect(await form.getByLabel('Expires on').inputValue()).toBe(day);
    const sent = page.waitForResponse(
      (response) => response.url().endsWith('/v1/api-keys') && response.request().method() === 'POST',
    );
    await form.getByRole('button', { name: 'Create key' }).click();
    const response = await sent;
    expect(response.status()).toBe(201);
    const { apiKeys } = unwrap(await ada.api.listApiKeys());
    expect(apiKeys.edges.find((edge) => edge.node.name === 'Reporting')?.node).toMatchObject({
      tenants: [tenant.id],
      scopes: ['works:read'],
      expiresAt: endOfDay,
    });

    // The secret, once.
    const secretField = page.getByLabel('Secret');
    await expectVisible(secretField);
    await expectVisible(page.getByText('This is the only time it is shown.'));
    const secret = await secretField.inputValue();
    expect(secret).toMatch(/^wk_/);
    await checkPage(page, 'api-keys-restricted-secret');
    await page.getByRole('button', { name: 'I have copied it' }).click();
    expect(await page.getByLabel('Secret').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);

    // The key does what it was given, and nothing else.
    const bearer = { Authorization: `Bearer ${secret}` };
    const works = (tenantId: string) => `${server.baseUrl}/v1/tenants/${tenantId}/works`;
    expect((await fetch(works(tenant.id), { headers: bearer })).status).toBe(200);
    const write = await fetch(works(tenant.id), {
      method: 'POST',
      headers: { ...bearer, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Not with this key' }),
    });
    expect(write.status).toBe(403);
    expect(write.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="works:write"');
    expect(await write.json()).toMatchObject({ code: 'insufficient_scope', scope: 'works:write' });
    expect((await fetch(works(other.id), { headers: bearer })).status).toBe(404);
    const manage = await fetch(`${server.baseUrl}/v1/api-keys`, { headers: bearer });
    expect(manage.status).toBe(403);
    expect(await manage.json()).toMatchObject({ code: 'insufficient_scope', scope: 'account:manage' });

    // Its row says what it may do, until when, and that it has been used.
    await page.reload();
    const row = page.getByRole('listitem').filter({ hasText: 'Reporting' });
    await expectVisible(row.getByText(/last used/));
    await expectVisible(row.locator('dd').getByText('Reach Ltd', { exact: true }));
    expect(await row.locator('dd').allTextContents()).toEqual(['Reach Ltd', 'works:read', expect.any(String)]);
    expect(await row.locator('time').getAttribute('datetime')).toBe(endOfDay);
    expect(await row.getByText('expired', { exact: true }).count()).toBe(0);
    const full = page.getByRole('listitem').filter({ hasText: 'Default key' });
    expect(await full.locator('dd').allTextContents()).toEqual(['all tenants', 'full access', 'never']);
    await checkPage(page, 'api-keys-restricted');

    // A month and a day later (the page's clock only), the row says it has expired.
    await page.clock.setFixedTime(new Date(Date.now() + 31 * 86_400_000));
    await page.reload();
    await expectVisible(row.getByText('expired', { exact: true }));
    await expectVisible(row.locator('dt').getByText('Expired', { exact: true }));
  });

  it('signs out: the session ends, a reload shows the sign-in page, the old cookie opens nothing', async () => {
    const ada = await server.createUser('Ada');
    const page = await newPage(PHONE);
    await signIn(page, ada);
    const [cookie] = await page.context().cookies();
    expect(cookie).toMatchObject({ name: 'works_session', httpOnly: true, sameSite: 'Lax', path: '/' });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expectVisible(page.getByLabel('Email', { exact: true }));
    await page.reload();
    await expectVisible(page.getByLabel('Email', { exact: true }));
    const replayed = await fetch(`${server.baseUrl}/v1/me`, {
      headers: { cookie: `${cookie!.name}=${cookie!.value}` },
    });
    expect(replayed.status).toBe(401);
    // A link that is not ours is refused with the server's words, and says how to get a new one.
    await page.goto(`${server.baseUrl}/console/sign-in#token=${'A'.repeat(43)}`);
    await expectVisible(page.getByText('not one of ours'));
    await expectVisible(page.getByText('get a new sign-in link'));
  });
});

describe('signing in by email, through the dev mailbox', () => {
  it('a newcomer signs in from the link in the log, names themself, reads the next code in the Mailbox on another device, and signs out everywhere', async () => {
    const email = `katherine-${Date.now()}@example.com`;
    // The phone: the README's newcomer, with nothing set up: the link is in the server's log.
    const phone = await newPage(PHONE);
    await phone.goto(`${server.baseUrl}/console`);
    await phone.goto(await emailedLink(phone, email));
    // No account had this address (SIGNUP=open, as on a developer's machine): the person gives their own names.
    await expectVisible(phone.getByText('tell us your name'));
    await checkPage(phone, 'sign-in-names');
    await phone.getByLabel('First name').fill('Katherine');
    await phone.getByLabel('Last name').fill('Johnson');
    await phone.getByRole('button', { name: 'Create my account' }).click();
    await expectVisible(phone.getByTestId('signed-in-as').filter({ hasText: 'Katherine Johnson' }));

    // The laptop asks for a sign-in; its email is read on the phone, in the Mailbox, and its code typed here.
    const laptop = await newPage();
    await laptop.goto(`${server.baseUrl}/console`);
    await emailedLink(laptop, email);
    await phone.goto(`${server.baseUrl}/console/mailbox`);
    const newest = phone.getByText(/Your sign-in link for works-api \(code [A-Z0-9]{4}-[A-Z0-9]{4}\)/).first();
    await expectVisible(newest);
    const code = /code ([A-Z0-9]{4}-[A-Z0-9]{4})/.exec((await newest.textContent()) ?? '')![1]!;
    await laptop.getByLabel('Code from the email').fill(code.toLowerCase());
    await laptop.getByRole('button', { name: 'Sign in' }).click();
    await expectVisible(laptop.getByTestId('signed-in-as').filter({ hasText: 'Katherine Johnson' }));

    await laptop.getByRole('link', { name: 'Sessions' }).click();
    const rows = laptop.locator('section[aria-labelledby="sessions-title"] li.row');
    await expectVisible(laptop.getByText('this browser'));
    expect(await rows.count()).toBe(2);
    // Sign out everywhere: both browsers are signed out.
    await laptop.getByRole('button', { name: 'Sign out everywhere' }).click();
    await laptop.getByRole('button', { name: 'Yes, sign out everywhere' }).click();
    await expectVisible(laptop.getByText('You are signed out everywhere.'));
    await phone.reload();
    await expectVisible(phone.getByLabel('Email', { exact: true }));
  });

  it('a form of another site cannot act with the session cookie (cross-site request forgery)', async () => {
    const ada = await server.createUser('Ada');
    const page = await newPage();
    await signIn(page, ada);
    // Another origin on the same host (another port is another origin, but the same site: the SameSite=Lax cookie
    // goes along with its form post, so only the server's own check stands in the way).
    const evil = createServer((_req, res) => {
      res.setHeader('Content-Type', 'text/html');
      res.end(`<form id="f" method="post" action="${server.baseUrl}/v1/tenants" enctype="text/plain">
        <input name='{"name":"Forged","x":"' value='"}'></form><script>document.getElementById('f').submit()</script>`);
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    try {
      const response = page.waitForResponse((res) => res.url() === `${server.baseUrl}/v1/tenants`);
      await page.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
      const answer = await response;
      expect(answer.status()).toBe(401);
      expect(await answer.text()).toMatch(/another site/);
      const { tenants } = unwrap(await ada.api.listTenants());
      expect(tenants.edges.map((edge) => edge.node.name)).not.toContain('Forged');
      // The console itself still works with the same cookie.
      await page.goto(`${server.baseUrl}/console`);
      await page.getByLabel('Name', { exact: true }).fill('Not forged');
      await page.getByRole('button', { name: 'Create tenant' }).click();
      await expectVisible(heading(page, 'Not forged'));
    } finally {
      await new Promise((resolve) => evil.close(resolve));
    }
  });
});

describe('the recipient, through the dev mailbox (no SMTP_URL)', () => {
  it("the email appears in the Mailbox, its link opens the recipient page, the answer shows in the sender's console", async () => {
    const ada = await server.createUser('Ada');
    const { tenant } = unwrap(await ada.api.createTenant({ body: { name: 'Mailbox Ltd' } }));
    const { work } = unwrap(
      await ada.api.createWork({ params: { path: { tenant_id: tenant.id } }, body: { name: 'Annual report 2026' } }),
    );
    const recipientEmail = `grace.recipient-${Date.now()}@example.com`;
    // A title with markup: the Mailbox and the recipient's page must show it as text.
    const title = 'Confirm <b>Q3</b> figures';
    const { request } = unwrap(
      await ada.api.createRequest({
        params: { path: { tenant_id: tenant.id, work_id: work.id } },
        body: {
          title,
          message: 'Please confirm the figures in section 3.',
          recipient: { email: recipientEmail, firstName: 'Grace', lastName: 'Hopper' },
          // Derived from the clock the test runs under: a date written here passed on 2026-12-01.
          dueAt: new Date(Date.now() + 30 * 86_400_000).toISOString(),
        },
      }),
    );

    const page = await newPage();
    await signIn(page, ada);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Mailbox' }).click();
    await expectVisible(heading(page, 'Mailbox'));
    // The email leaves through the outbox a moment later; the page looks again every few seconds.
    const mail = page.getByRole('article').filter({ hasText: recipientEmail });
    // The subject is ours (who, from which tenant); the title is in the body only.
    await expectVisible(mail.getByText('Ada Lovelace of "Mailbox Ltd" sent you a request'));
    expect(await page.locator('b').count()).toBe(0); // the title stayed text
    for (const viewport of [DESKTOP, PHONE]) {
      await page.setViewportSize(viewport);
      await screenshot(page, 'mailbox');
      const violations = await axeScan(page);
      axeResults[`mailbox at ${viewport.width} px`] = violations;
      expect(violations).toEqual([]);
    }
    await page.setViewportSize(DESKTOP);

    // The HTML part, on demand, in a frame that runs no script and is not of the console's origin. (The newest
    // email, open at first, may be Ada's own sign-in email: open this one.)
    await openMail(mail);
    await mail.getByRole('button', { name: 'Show the HTML part (without its styles)' }).click();
    const frameElement = mail.locator('iframe');
    expect(await frameElement.getAttribute('sandbox')).toBe('allow-popups allow-popups-to-escape-sandbox');
    // What the sender wrote is a quotation in the email's body, as text.
    const htmlPart = mail.frameLocator('iframe').locator('blockquote p').first();
    await expectVisible(htmlPart);
    expect(await htmlPart.textContent()).toBe(title);
    await screenshot(page, 'mailbox-html-part');
    await mail.getByRole('button', { name: 'Hide the HTML part' }).click();

    // Follow the link of the email's text, as the recipient would: a new tab, with no account.
    const link = mail.locator('.mail-text a', { hasText: '/r/' });
    const href = (await link.getAttribute('href'))!;
    expect(href).toMatch(new RegExp(`^${server.baseUrl}/r/[A-Za-z0-9_-]{43}$`));
    expect(await mail.getByRole('link', { name: 'Open the answer page' }).getAttribute('href')).toBe(href);
    const [recipientPage] = await Promise.all([page.context().waitForEvent('page'), link.click()]);
    pageErrors.push(watchForErrors(recipientPage));
    await recipientPage.waitForLoadState();
    expect(recipientPage.url()).toBe(href);
    await expectVisible(recipientPage.getByRole('heading', { level: 1, name: title }));
    await expectVisible(recipientPage.getByText('Ada Lovelace (ada'));
    expect(await recipientPage.evaluate(() => document.referrer)).toBe('');

    const checkRecipientPage = async (name: string) => {
      for (const viewport of [DESKTOP, PHONE]) {
        await recipientPage.setViewportSize(viewport);
        await screenshot(recipientPage, name);
        const violations = await axeScan(recipientPage);
        axeResults[`${name} at ${viewport.width} px`] = violations;
        expect(violations).toEqual([]);
      }
      // At 375 px nothing is wider than the screen: no sideways scrolling.
      expect(await recipientPage.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    };
    await checkRecipientPage('recipient-page');
    await recipientPage.getByLabel('Your answer').fill('The figures are correct.');
    await recipientPage.getByRole('button', { name: 'Send my answer' }).click();
    await expectVisible(recipientPage.getByRole('status').getByText('You have answered this request.'));
    await checkRecipientPage('recipient-page-answered');

    // The sender's console: confirmed, with the answer and who gave it.
    await page.bringToFront();
    await mail.getByRole('link', { name: 'View the request' }).click();
    await expectVisible(heading(page, title));
    await expectVisible(page.locator('.subtitle').getByText('confirmed'));
    const details = page.locator('#details-title + dl');
    await expectVisible(details.getByText('The figures are correct.', { exact: true }));
    // The link came from the dev mailbox, which the tenant's members can read: the answer is marked, not the
    // recipient's word.
    await expectVisible(
      details.getByText(
        /by someone with the dev mailbox's link for Grace Hopper \(no email was sent: not necessarily the recipient\)$/,
      ),
    );
    const timeline = page.getByRole('list', { name: 'Events, newest first' });
    await expectVisible(timeline.getByText('Confirmed: pending → confirmed'));
    await expectVisible(timeline.getByText(/^by someone with the dev mailbox's link for Grace Hopper/));
    await checkPage(page, 'request-answered');
    const { request: confirmed } = unwrap(
      await ada.api.getRequest({ params: { path: { tenant_id: tenant.id, work_id: work.id, id: request.id } } }),
    );
    expect(confirmed).toMatchObject({
      status: 'confirmed',
      answer: 'The figures are correct.',
      confirmedThroughDevMailbox: true,
    });
  });
});

describe('finding things and catching up', () => {
  it('searches works and requests from the tenant page, lists the requests of every work by status, and shows the events feed', async () => {
    const ada = await server.createUser('Ada');
    const { tenant } = unwrap(await ada.api.createTenant({ body: { name: 'Search Ltd' } }));
    const path = { tenant_id: tenant.id };
    const { work: report } = unwrap(
      await ada.api.createWork({ params: { path }, body: { name: 'Rapport financier Été' } }),
    );
    const { work: other } = unwrap(await ada.api.createWork({ params: { path }, body: { name: 'Contracts' } }));
    const send = (workId: string, title: string, email: string) =>
      ada.api.createRequest({
        params: { path: { ...path, work_id: workId } },
        body: { title, recipient: { email }, dueAt: new Date(Date.now() + 3_600_000).toISOString() },
      });
    const { request: figures } = unwrap(await send(report.id, 'Confirm the figures', 'grace@example.com'));
    const { request: signature } = unwrap(await send(other.id, 'Sign the contract', 'alan@example.com'));
    unwrap(
      await ada.api.confirmRequest({
        params: { path: { ...path, work_id: other.id, id: signature.id } },
        body: { answer: 'Signed.' },
      }),
    );

    const page = await newPage();
    await signIn(page, ada, `/console/tenants/${tenant.id}`);
    await expectVisible(heading(page, 'Search Ltd'));
    await page.getByLabel('Search works and requests').fill('rapport ete');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const search = page.getByRole('region', { name: 'Search' });
    await expectVisible(search.getByRole('link', { name: 'Rapport financier Été' }));
    await expectVisible(search.getByText('No request matches.'));
    await page.getByLabel('Search works and requests').fill('GRACE');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expectVisible(search.getByRole('link', { name: figures.title }));
    await expectVisible(search.getByText('No work matches.'));
    await checkPage(page, 'tenant with search results');

    await page.getByRole('link', { name: 'All requests' }).click();
    await expectVisible(heading(page, 'Requests'));
    await expectVisible(page.getByRole('link', { name: 'Confirm the figures' }));
    await expectVisible(page.getByRole('link', { name: 'Sign the contract' }));
    await page.getByLabel('Show').selectOption({ label: 'Confirmed, waiting for validation' });
    await expectVisible(page.getByText('Showing 1 of 1 requests'));
    expect(await page.getByRole('link', { name: 'Confirm the figures' }).count()).toBe(0);
    await page.getByLabel('Show').selectOption({ label: 'Overdue' });
    await expectVisible(page.getByText('No overdue requests.'));
    await page.getByLabel('Show').selectOption({ label: 'Pending' });
    await expectVisible(page.getByRole('link', { name: 'Confirm the figures' }));
    // The search box narrows the view it is in: every status, then the recipient's name.
    await page.getByLabel('Show').selectOption({ label: 'All' });
    await page.getByLabel('Search requests').fill('ALAN');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expectVisible(page.getByText('Showing 1 of 1 requests'));
    await expectVisible(page.getByRole('link', { name: 'Sign the contract' }));
    expect(await page.getByRole('link', { name: 'Confirm the figures' }).count()).toBe(0);
    await checkPage(page, 'tenant requests');
    await page.getByLabel('Search requests').fill('nobody');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expectVisible(page.getByText('No request matches.'));

    // A fourth event of another type, so that two types chosen are not every type.
    unwrap(await ada.api.discardWork({ params: { path: { ...path, work_id: other.id } } }));
    await page.goto(`${server.baseUrl}/console/tenants/${tenant.id}/events`);
    await expectVisible(heading(page, 'Events'));
    await expectVisible(page.getByText('Request confirmed ·'));
    await expectVisible(page.getByText('Showing 4 of 4 events'));
    await page.getByLabel('Request sent').check();
    await expectVisible(page.getByText('Showing 2 of 2 events'));
    await page.getByLabel('Request confirmed').check();
    await expectVisible(page.getByText('Showing 3 of 3 events'));
    expect(await page.getByText('Work discarded ·').count()).toBe(0);
    await checkPage(page, 'events');
    await page.getByLabel('Request sent').uncheck();
    await page.getByLabel('Request confirmed').uncheck();
    await expectVisible(page.getByText('Showing 4 of 4 events'));
  });
});

describe('invitations: membership by consent', () => {
  it('the invited user finds the invitation through its email, accepts one with their own names, declines another, and may leave', async () => {
    const ada = await server.createUser('Ada');
    const grace = await server.createUser('Grace');
    const { tenant } = unwrap(await ada.api.createTenant({ body: { name: 'Invited Ltd' } }));
    const { tenant: other } = unwrap(await ada.api.createTenant({ body: { name: 'Declined Ltd' } }));
    for (const { id } of [other, tenant])
      unwrap(
        await ada.api.addMember({
          params: { path: { tenant_id: id } },
          // What Ada types is only the email's greeting: it must never become Grace's name.
          body: { email: grace.email, role: 'member', firstName: 'Gracie', lastName: 'Typed' },
        }),
      );

    const page = await newPage();
    await signIn(page, grace);
    await expectVisible(page.getByText('You have 2 pending invitations to join a tenant.'));
    // The invitation email (in the dev mailbox, to its addressee) links to the console's Invitations page.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Mailbox' }).click();
    const mail = page.getByRole('article').filter({ hasText: 'Invited Ltd' });
    await openMail(mail);
    await expectVisible(mail.getByText('Hello Gracie,'));
    const link = mail.locator('.mail-text a', { hasText: '/console/invitations' }).first();
    const href = (await link.getAttribute('href'))!;
    expect(href).toBe(`${server.baseUrl}/console/invitations?email=${encodeURIComponent(grace.email)}`);
    await page.goto(href);
    await expectVisible(heading(page, 'Invitations'));
    const invited = page.getByRole('listitem', { name: 'Invitation to Invited Ltd' });
    await expectVisible(invited.getByText(`from Ada Lovelace (${ada.email})`));
    await checkPage(page, 'invitations');

    const declined = page.getByRole('listitem', { name: 'Invitation to Declined Ltd' });
    await declined.getByRole('button', { name: 'Decline' }).click();
    await declined.getByRole('button', { name: 'Yes, decline' }).click();
    await expectVisible(page.getByText('Showing 1 of 1 invitations'));

    await invited.getByRole('button', { name: 'Accept' }).click();
    await expectVisible(heading(page, 'Invited Ltd'));
    const me = page.getByRole('listitem').filter({ hasText: '(you)' });
    await expectVisible(me.getByText('Grace Hopper'));
    expect(await page.getByText('Gracie').count()).toBe(0);
    const members = async (tenantId: string) =>
      unwrap(await ada.api.listMembers({ params: { path: { tenant_id: tenantId } } })).members.edges.map(
        (edge) => edge.node.user.email,
      );
    expect(await members(tenant.id)).toContain(grace.email);
    expect(await members(other.id)).not.toContain(grace.email);

    // A member leaves on their own: the tenant is gone from their list.
    await me.getByRole('button', { name: 'Leave' }).click();
    await me.getByRole('button', { name: 'Yes, leave' }).click();
    await expectVisible(heading(page, 'Tenants'));
    await expectVisible(page.getByText('You are not a member of any tenant yet'));
    expect(await members(tenant.id)).not.toContain(grace.email);
  });
});

describe('a server that sends through SMTP', () => {
  it('has no dev mailbox, and the console shows no Mailbox', async () => {
    // Nothing listens on port 9: the emails would wait in the outbox; this test sends none.
    const catcher = await startSmtpCatcher();
    const smtpServer = await startServer({ SMTP_URL: catcher.url });
    try {
      const ada = await smtpServer.createUser('Ada');
      const probe = await fetch(`${smtpServer.baseUrl}/dev/mailbox`, {
        headers: { Authorization: `Bearer ${ada.apiKey}` },
      });
      expect(probe.status).toBe(404);
      const page = await newPage();
      await page.goto(`${smtpServer.baseUrl}/console`);
      // The sign-in email really goes out through SMTP, and its link is not in the server's log.
      await page.getByLabel('Email', { exact: true }).fill(ada.email);
      await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
      const deadline = Date.now() + 15_000;
      while (!catcher.messages.some((message) => message.includes(`To: ${ada.email}`)) && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 100));
      const mail = catcher.messages.find((message) => message.includes(`To: ${ada.email}`))!;
      const link = /(http:\/\/\S+\/console\/sign-in#token=[A-Za-z0-9_-]{43})/.exec(mail)![1]!;
      expect(smtpServer.output()).not.toContain(link.split('#token=')[1]);
      await page.goto(link);
      const nav = page.getByRole('navigation', { name: 'Main' });
      await expectVisible(nav.getByRole('link', { name: 'API keys' }));
      await page.waitForLoadState('networkidle');
      expect(await nav.getByRole('link', { name: 'Mailbox' }).count()).toBe(0);
      // Its address still answers (still signed in: the session cookie), saying why.
      await page.goto(`${smtpServer.baseUrl}/console/mailbox`);
      await expectVisible(page.getByText('there is no dev mailbox to show'));
    } finally {
      await smtpServer.stop();
      await catcher.close();
    }
  });
});

function createKeyClient(apiKey: string) {
  return createClient({ baseUrl: server.baseUrl, apiKey, retry: false });
}

/** Makes `user` a member of the tenant as the product does: `by` invites their email, and they accept it. */
async function join(by: TestUser, tenantId: string, user: TestUser, role: 'owner' | 'admin' | 'member') {
  const { invitation } = unwrap(
    await by.api.addMember({ params: { path: { tenant_id: tenantId } }, body: { email: user.email, role } }),
  );
  const { tenant } = unwrap(await user.api.acceptInvitation({ params: { path: { invitation_id: invitation.id } } }));
  const me = unwrap(await user.api.getMe()).user;
  return unwrap(await by.api.getMember({ params: { path: { tenant_id: tenant.id, user_id: me.id } } })).member;
}

describe('bulk send from a spreadsheet (issue 41)', () => {
  it('uploads a CSV with a bad row, flags it before sending, sends once it is fixed, and lists the requests with their email status', async () => {
    const ada = await server.createUser('Ada');
    const { tenant } = unwrap(await ada.api.createTenant({ body: { name: 'Bulk Ltd' } }));
    const { work } = unwrap(
      await ada.api.createWork({ params: { path: { tenant_id: tenant.id } }, body: { name: 'Year-end balances' } }),
    );
    const page = await newPage();
    await signIn(page, ada, `/console/tenants/${tenant.id}/works/${work.id}`);
    await expectVisible(heading(page, 'Year-end balances'));
    await page.getByRole('button', { name: 'Send from a spreadsheet…' }).click();

    const due = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
    const csv = [
      'email,first name,last name,title,message,due date',
      `grace@example.com,Grace,Hopper,,,${due}`,
      `"not-an-email",Alan,Turing,Balance at 31 December,"Please confirm, with the invoices.",${due}`,
      'katherine@example.com,Katherine,Johnson,Open invoices,,',
    ].join('\n');
    await page
      .getByLabel('CSV file')
      .setInputFiles({ name: 'balances.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByLabel('Default title').fill('Confirm your balance');
    const rows = page.getByTestId('bulk-row');
    await expectVisible(page.getByTestId('bulk-summary').filter({ hasText: '3 rows, 1 to fix before sending' }));
    expect(await rows.count()).toBe(3);
    await expectVisible(rows.nth(1).getByText('“not-an-email” is not an email address'));
    expect(await rows.nth(1).getAttribute('class')).toBe('row-bad');
    // Nothing goes out while a row is bad.
    expect(await page.getByRole('button', { name: 'Send 3 requests' }).isDisabled()).toBe(true);
    await checkPage(page, 'bulk-send-preview');

    // Fixed in the sheet's text: the preview follows, and the batch goes in one call.
    const rowsField = page.getByLabel('Rows', { exact: true });
    await rowsField.fill((await rowsField.inputValue()).replace('not-an-email', 'alan@example.com'));
    await expectVisible(page.getByTestId('bulk-summary').filter({ hasText: '3 rows, ready to send' }));
    const sent = page.waitForResponse((response) => response.url().endsWith('/request-batches'));
    await page.getByRole('button', { name: 'Send 3 requests' }).click();
    expect((await sent).status()).toBe(201);
    await expectVisible(page.getByText('Sent 3 requests.'));

    // The work's list shows them, each with its email's status.
    const list = page.getByRole('region', { name: 'Requests', exact: true }).locator('ul.rows');
    await expectVisible(list.getByRole('link', { name: 'Confirm your balance' }));
    await expectVisible(list.getByRole('link', { name: 'Balance at 31 December' }));
    await expectVisible(list.getByRole('link', { name: 'Open invoices' }));
    await expectVisible(list.getByText(/email (queued|sent)/));
    const { requests } = unwrap(
      await ada.api.listRequests({ params: { path: { tenant_id: tenant.id, work_id: work.id } } }),
    );
    expect(requests.totalCount).toBe(3);
    expect(requests.edges.map((edge) => edge.node.recipient.email).sort()).toEqual([
      'alan@example.com',
      'grace@example.com',
      'katherine@example.com',
    ]);
    await checkPage(page, 'bulk-send-sent');
  });
});
