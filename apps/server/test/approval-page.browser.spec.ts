import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { chromiumForSuite } from '@toolgate/testing';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalPageUrl } from '../src/http/approval-page.js';
import { connectMcp, type Harness } from './e2e-harness.js';
import { ALICE, CAROL, GINA, RITA, requestEcho, startApprovalServer } from './approval-page-setup.js';

const executablePath = chromiumForSuite('approval page (browser)');

/** Waits for what the page shows; generous, since the box is shared and chromium competes for it. */
const poll = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 15_000, interval: 50 });

/** Markup and script in every spelling the page must show as text: it would set `window.__pwned` if it ran. */
const HOSTILE_ARGS =
  '<script>window.__pwned="script"</script><img src=x onerror="window.__pwned=\'img\'"><a href="javascript:window.__pwned=\'link\'">open</a></textarea><svg onload="window.__pwned=\'svg\'"></svg>';
/**
 * A bidi override (`exe.gnp` would read as `png.exe`), a zero-width space, then a no-break space,
 * the braille blank, a tag letter, a bidi isolate and the Hangul filler.
 */
const HIDDEN_ARGS = 'report\u202Egnp.exe\u200B a\u00A0b\u2800c\u{E0041}d\u2066e\u3164f';

interface Seen {
  readonly requests: { url: string; authorization?: string }[];
  readonly pageErrors: string[];
}

describe.skipIf(executablePath === undefined)('the approval page in chromium', () => {
  let h: Harness;
  let browser: Browser;

  beforeAll(async () => {
    h = await startApprovalServer();
    browser = await chromium.launch({ executablePath: executablePath!, headless: true, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
    await h?.stop();
  });

  /** A fresh browser context (no shared storage), with a record of every request and CSP violation. */
  async function open(id: string): Promise<{ page: Page; seen: Seen; close: () => Promise<void> }> {
    const context = await browser.newContext();
    const page = await context.newPage();
    const seen: Seen = { requests: [], pageErrors: [] };
    page.on('request', (request) => seen.requests.push({ url: request.url(), ...(request.headers()['authorization'] ? { authorization: request.headers()['authorization'] } : {}) }));
    page.on('pageerror', (error) => seen.pageErrors.push(error.message));
    // Init scripts run outside the page's CSP: they only watch for violations of it.
    // (Strings, not functions: this project's types carry no DOM.)
    await page.addInitScript(`window.__violations = []; document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));`);
    await page.goto(approvalPageUrl(h.server.url, id));
    return { page, seen, close: () => context.close() };
  }

  async function signIn(page: Page, token: string): Promise<void> {
    await page.getByLabel('Approver token').fill(token);
    await page.getByRole('button', { name: 'Show request' }).click();
  }

  const text = (page: Page, id: string) => page.locator(`#${id}`).textContent();
  const rest = async (id: string) => (await h.call(`/api/v1/approvals/${id}`, { token: CAROL })).body;

  /** Nothing the agent wrote ran, and the page itself kept to its CSP. */
  async function expectNothingRan(page: Page, seen: Seen): Promise<void> {
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    expect(await page.locator('#request script, #request img, #request a, #request svg, #request iframe').count()).toBe(0);
    expect(await page.evaluate('window.__violations')).toEqual([]);
    expect(seen.pageErrors).toEqual([]);
  }

  /** The token was only ever a header on same-origin API calls: never in a URL, storage or cookie. */
  async function expectTokenOnlyInHeaders(page: Page, seen: Seen, token: string): Promise<void> {
    const origin = new URL(h.server.url).origin;
    for (const request of seen.requests) {
      expect(request.url).not.toContain(token);
      expect(new URL(request.url).origin).toBe(origin);
      if (request.authorization !== undefined) {
        expect(request.authorization).toBe(`Bearer ${token}`);
        expect(new URL(request.url).pathname.startsWith('/api/v1/approvals/')).toBe(true);
      }
    }
    expect(seen.requests.some((r) => r.authorization !== undefined)).toBe(true);
    expect(page.url()).not.toContain(token);
    const stored = await page.evaluate(`({ local: localStorage.length, session: sessionStorage.length, cookie: document.cookie, field: document.getElementById('token').value })`);
    expect(stored).toEqual({ local: 0, session: 0, cookie: '', field: '' });
  }

  it('shows the approver tool, version, requester, the args as text with hidden characters written out, digest and expiry', async () => {
    const id = await requestEcho(h, `${HOSTILE_ARGS} ${HIDDEN_ARGS}`);
    const view = await rest(id);
    const { page, seen, close } = await open(id);
    try {
      await signIn(page, CAROL);
      await poll(() => text(page, 'field-tool')).toBe('files__echo');
      expect(await text(page, 'field-id')).toBe(id);
      expect(await text(page, 'field-version')).toBe(view.version);
      expect(await text(page, 'field-requester')).toBe('alice');
      expect(await text(page, 'field-status')).toBe('pending');
      expect(await text(page, 'field-digest')).toBe(view.payloadDigest);
      expect(await text(page, 'field-expires')).toBe(new Date(view.expiresAt).toISOString());
      const args = await text(page, 'field-args');
      // The markup arrives as the characters it is made of, inside the JSON of the exact arguments.
      expect(args).toContain('<script>window.__pwned=\\"script\\"</script>');
      expect(args).toContain('<img src=x onerror=');
      expect(args).toContain('href=\\"javascript:');
      expect(args).toContain('</textarea>');
      expect(args).toContain('report\\u{202E}gnp.exe\\u{200B} a\\u{00A0}b\\u{2800}c\\u{E0041}d\\u{2066}e\\u{3164}f');
      expect(args).not.toMatch(/[\u202E\u200B\u00A0\u2800\u2066\u3164]|\u{E0041}/u);
      const hidden = await page.locator('#hidden-list li').allTextContents();
      expect(hidden).toEqual(view.hidden);
      expect(hidden.join(' ')).toContain('U+202E at args.text:');
      expect(await page.getByRole('button', { name: 'Approve' }).isVisible()).toBe(true);
      await expectNothingRan(page, seen);
      await expectTokenOnlyInHeaders(page, seen, CAROL);
    } finally {
      await close();
    }
  });

  it('approves with a reason holding markup; the decision is recorded as typed and the requester’s call runs once', async () => {
    const id = await requestEcho(h, 'ship it');
    const reason = '</textarea><script>window.__pwned="reason"</script> fine \u2066by me';
    const { page, seen, close } = await open(id);
    try {
      await signIn(page, CAROL);
      await poll(() => text(page, 'field-status')).toBe('pending');
      await page.getByLabel('Reason (optional, recorded in the audit trail)').fill(reason);
      await page.getByRole('button', { name: 'Approve' }).click();
      await poll(() => text(page, 'field-status')).toBe('approved');
      expect(await text(page, 'status')).toBe('Done: the request is approved.');
      expect(await text(page, 'field-decision')).toBe('approved by carol reason: </textarea><script>window.__pwned="reason"</script> fine \\u{2066}by me');
      expect(await page.locator('#decide').isHidden()).toBe(true);
      await expectNothingRan(page, seen);
      await expectTokenOnlyInHeaders(page, seen, CAROL);
    } finally {
      await close();
    }
    expect(await rest(id)).toMatchObject({ status: 'approved', decidedBy: 'carol', reason });
    const run = await h.call('/api/v1/tools/invoke', { method: 'POST', token: ALICE, json: { tool: 'files__echo', args: { text: 'ship it' }, approvalId: id } });
    expect(run.body).toMatchObject({ ok: true });
    const replay = await h.call('/api/v1/tools/invoke', { method: 'POST', token: ALICE, json: { tool: 'files__echo', args: { text: 'ship it' }, approvalId: id } });
    expect(replay.body.ok).toBe(false);
  });

  it('denies with a reason', async () => {
    const id = await requestEcho(h, 'drop the table');
    const { page, close } = await open(id);
    try {
      await signIn(page, CAROL);
      await poll(() => text(page, 'field-status')).toBe('pending');
      await page.getByLabel('Reason (optional, recorded in the audit trail)').fill('not in prod');
      await page.getByRole('button', { name: 'Deny' }).click();
      await poll(() => text(page, 'field-status')).toBe('denied');
      expect(await text(page, 'field-decision')).toBe('denied by carol reason: not in prod');
    } finally {
      await close();
    }
    expect(await rest(id)).toMatchObject({ status: 'denied', decidedBy: 'carol', reason: 'not in prod' });
  });

  it.each([
    ['a requester without the approver role', ALICE, 'alice', () => "Only a principal with the 'approver' role may decide approval requests; alice does not hold it."],
    ['an approver deciding its own request', RITA, 'rita', (id: string) => `You requested approval '${id}' yourself, and tenant 'acme' does not allow self-approval; another approver must decide it.`],
  ])("%s sees its own request, and the server's refusal when it approves it", async (_what, token, who, refusal) => {
    const id = await requestEcho(h, 'let me do it myself', token);
    const { page, seen, close } = await open(id);
    try {
      await signIn(page, token);
      await poll(() => text(page, 'field-requester')).toBe(who);
      await page.getByRole('button', { name: 'Approve' }).click();
      await poll(() => text(page, 'problem')).toBe(refusal(id));
      expect(await text(page, 'field-status')).toBe('pending');
      await expectTokenOnlyInHeaders(page, seen, token);
    } finally {
      await close();
    }
    expect((await rest(id)).status).toBe('pending');
  });

  describe('a wrong token and another tenant', () => {
    it.each([
      ['a wrong token', 'not-a-token-of-anyone-000000000000'],
      ['a token with a stray character', `${CAROL}!`],
      ['markup typed as the token', '<img src=x onerror=alert(1)>'],
    ])('%s is refused and shows nothing of the request', async (_what, token) => {
      const id = await requestEcho(h, 'secret payload');
      const { page, seen, close } = await open(id);
      try {
        await signIn(page, token);
        await poll(() => text(page, 'problem')).toBe('The server refused this token. Check it and try again.');
        expect(await page.locator('#request').isHidden()).toBe(true);
        expect(await page.content()).not.toContain('secret payload');
        await expectNothingRan(page, seen);
        // The right token afterwards replaces the wrong one; nothing of the first attempt lingers.
        await signIn(page, CAROL);
        await poll(() => text(page, 'field-args')).toContain('secret payload');
        expect(await text(page, 'problem')).toBe('');
        expect(seen.requests.filter((r) => r.authorization !== undefined).map((r) => r.authorization)).toEqual([`Bearer ${token}`, `Bearer ${CAROL}`]);
      } finally {
        await close();
      }
    });

    it("another tenant's approval shows an approver of this tenant the server's not-found", async () => {
      const foreign = await requestEcho(h, 'globex payload', GINA);
      const { page, close } = await open(foreign);
      try {
        await signIn(page, CAROL);
        await poll(() => text(page, 'problem')).toBe(`There is no approval '${foreign}' that you can see in your tenant.`);
        expect(await page.locator('#request').isHidden()).toBe(true);
        expect(await page.content()).not.toContain('globex payload');
      } finally {
        await close();
      }
    });
  });

  describe('clickjacking', () => {
    let framer: Server;
    beforeAll(async () => {
      // Another origin that frames the page, as a hostile site would.
      framer = createServer((req, res) => {
        const target = new URL(req.url ?? '/', 'http://x').searchParams.get('target') ?? '';
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(`<!doctype html><iframe id="victim" src="${target.replaceAll('"', '&quot;')}" width="800" height="600"></iframe>`);
      });
      await new Promise<void>((resolve) => framer.listen(0, '127.0.0.1', resolve));
    });
    afterAll(async () => new Promise<void>((resolve) => framer.close(() => resolve())));

    it.each([
      ['a same-site origin (another port)', '127.0.0.1'],
      ['a cross-site origin', 'localhost'],
    ])('a frame from %s never shows the page', async (_what, framerHost) => {
      const id = await requestEcho(h, 'frame me');
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        const statuses: number[] = [];
        page.on('response', (response) => {
          if (response.url().includes('/approvals/')) statuses.push(response.status());
        });
        const target = approvalPageUrl(h.server.url, id);
        await page.goto(`http://${framerHost}:${(framer.address() as AddressInfo).port}/?target=${encodeURIComponent(target)}`);
        await page.waitForLoadState('load');
        const frame = page.frames().find((f) => f !== page.mainFrame());
        expect(frame).toBeDefined();
        expect(await frame!.locator('#token').count()).toBe(0);
        expect(statuses.length).toBeGreaterThan(0);
        expect(statuses.every((s) => s !== 200)).toBe(true);
      } finally {
        await context.close();
      }
    });
  });

  describe("the MCP round trip: an agent's held call, decided on the page", () => {
    type Era = '2026-07-28 (client 2.4, input_required)' | '2025-11-25 (sdk 1.x, URL elicitation)';
    interface Agent {
      call(text: string): Promise<{ isError?: boolean; content: { type: string; text: string }[] }>;
      close(): Promise<void>;
    }

    /** An MCP client of the requester whose elicitation handler hands the URL to `human` and answers what it says. */
    async function agent(era: Era, human: (url: string) => Promise<'accept' | 'decline'>): Promise<Agent> {
      const answer = async (params: { mode?: string; url?: string }) => {
        expect(params.mode).toBe('url');
        return { action: await human(String(params.url)) };
      };
      if (era === '2025-11-25 (sdk 1.x, URL elicitation)') {
        const client = new LegacyClient({ name: 'agent-2025', version: '1' }, { capabilities: { elicitation: { url: {} } } });
        client.setRequestHandler(ElicitRequestSchema, (request) => answer(request.params as never));
        await connectMcp(h, ALICE, client);
        return {
          call: (text) => client.callTool({ name: 'files__echo', arguments: { text } }, undefined, { timeout: 60_000 }) as never,
          close: () => client.close(),
        };
      }
      const client = new ModernClient({ name: 'agent-2026', version: '1' }, { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } });
      client.setRequestHandler('elicitation/create', (request) => answer(request.params as never));
      await connectMcp(h, ALICE, client);
      return { call: (text) => client.callTool({ name: 'files__echo', arguments: { text } }, { timeout: 60_000 }) as never, close: () => client.close() };
    }

    it.each<Era>(['2026-07-28 (client 2.4, input_required)', '2025-11-25 (sdk 1.x, URL elicitation)'])(
      '%s: the URL opens the page, the approver approves, and the held call returns the output',
      async (era) => {
        const shown: string[] = [];
        let decidedId = '';
        const client = await agent(era, async (url) => {
          shown.push(url);
          const id = decodeURIComponent(new URL(url).pathname.split('/').pop()!);
          // Named before the page opens: a 2025-era hold polls the store, not this answer, so the
          // call's result may arrive while the page is still closing.
          decidedId = id;
          const { page, seen, close } = await open(id);
          try {
            expect(page.url()).toBe(url);
            await signIn(page, CAROL);
            await poll(() => text(page, 'field-tool')).toBe('files__echo');
            expect(await text(page, 'field-requester')).toBe('alice');
            expect(await text(page, 'field-args')).toContain(`"text": "held for ${era}"`);
            await page.getByRole('button', { name: 'Approve' }).click();
            await poll(() => text(page, 'field-status')).toBe('approved');
            await expectNothingRan(page, seen);
            await expectTokenOnlyInHeaders(page, seen, CAROL);
          } finally {
            await close();
          }
          // "accept" only says the user went to the page; the approval itself was the approver's.
          return 'accept';
        });
        try {
          const result = await client.call(`held for ${era}`);
          expect(result.isError).toBeFalsy();
          expect(result.content.map((c) => c.text).join('')).toContain(`held for ${era}`);
          expect(shown).toEqual([approvalPageUrl(h.server.url, decidedId)]);
          expect(await rest(decidedId)).toMatchObject({ status: 'consumed', requester: 'alice', decidedBy: 'carol' });
        } finally {
          await client.close();
        }
      },
    );

    it('an approver who denies on the page ends the held call with APPROVAL_DENIED; the approval stays denied, never used', async () => {
      let deniedId = '';
      const client = await agent('2026-07-28 (client 2.4, input_required)', async (url) => {
        deniedId = decodeURIComponent(new URL(url).pathname.split('/').pop()!);
        const { page, close } = await open(deniedId);
        try {
          await signIn(page, CAROL);
          await poll(() => text(page, 'field-status')).toBe('pending');
          await page.getByLabel('Reason (optional, recorded in the audit trail)').fill('no echo today');
          await page.getByRole('button', { name: 'Deny' }).click();
          await poll(() => text(page, 'field-status')).toBe('denied');
        } finally {
          await close();
        }
        return 'accept';
      });
      try {
        const result = await client.call('denied on the page');
        expect(result.isError).toBe(true);
        expect(JSON.stringify(result.content)).toContain('APPROVAL_DENIED');
        expect(await rest(deniedId)).toMatchObject({ status: 'denied', reason: 'no echo today' });
      } finally {
        await client.close();
      }
    });
  });
});

