import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { apiKeyDisplayPrefix } from '../../src/shared/api-key';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai';
import { pgliteTarget } from '../helpers/databases';
import { restClient, type Json } from '../helpers/management-clients';
import { startTestServices, type TestServices } from '../helpers/services';

/**
 * The web console (docs/console.md) in a real headless Chromium (Debian's `chromium`, driven by
 * playwright-core), against a real gateway on port 0 with real detection and the embedded database:
 * sign-in (a traffic key is refused, saying why), events (rows of real traffic appear without a reload,
 * a filter, the detail pane), the playground (a fired span highlighted) and policies (an edit saved, an
 * invalid value answered inline). It asserts on what a person sees. Screenshots: test-artifacts/console/.
 * .ci/run installs chromium when it is missing; under CI=true a missing browser fails the suite.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = join(__dirname, '..', '..', 'test-artifacts', 'console');
const haveBrowser = existsSync(CHROMIUM);
if (!haveBrowser && process.env.CI === 'true') throw new Error(`console browser tests: no Chromium at ${CHROMIUM} (.ci/run installs Debian's chromium package)`);
const describeWithBrowser = haveBrowser ? describe : describe.skip;
if (!haveBrowser) process.stderr.write(`console.test.ts skipped: no Chromium at ${CHROMIUM} (apt-get install chromium)\n`);

/** Waits until the locator's text matches (auto-retrying, as a person would look again). */
async function seeText(locator: Locator, pattern: RegExp | string, timeout = 15_000): Promise<string> {
  const matches = (t: string) => (typeof pattern === 'string' ? t.includes(pattern) : pattern.test(t));
  const end = Date.now() + timeout;
  let last = '';
  for (;;) {
    last = ((await locator.count()) > 0 ? await locator.first().innerText() : '') ?? '';
    if (matches(last)) return last;
    if (Date.now() > end) throw new Error(`expected ${String(pattern)} in: ${last.slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describeWithBrowser('console (headless Chromium)', () => {
  let upstream: FakeOpenAI;
  let svc: TestServices;
  let browser: Browser;
  let page: Page;
  let admin: ReturnType<typeof restClient>;
  let openai: OpenAI;
  let blockedRequestId: string;
  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    upstream = await startFakeOpenAI();
    svc = await startTestServices(pgliteTarget, { env: { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'sk-upstream' } });
    admin = restClient(svc.gatewayUrl, svc.apiKey);
    // Signature rules only (deny list, e-mail logged): verdicts never depend on classifier backends.
    const policy = (await admin.get('/v1/policies/?is_default=true')).json.results[0];
    const patch = {
      input_detectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'log' }],
      output_detectors: [],
      deny_list: { entries: ['forbidden'], match_type: 'contains' },
    };
    expect((await admin.patch(`/v1/policies/${policy.id}/`, patch)).status).toBe(200);
    openai = new OpenAI({ apiKey: svc.apiKey, baseURL: `${svc.gatewayUrl}/v1`, maxRetries: 0 });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      // playwright gives the browser a fresh temporary profile (--user-data-dir) of its own.
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    page.setDefaultTimeout(15_000);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await svc?.dispose();
    await upstream?.close();
  });

  it('serves the app at /console offline, with its own assets only and a strict CSP', async () => {
    const res = await fetch(`${svc.gatewayUrl}/console`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await res.text();
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const js = await fetch(`${svc.gatewayUrl}${script}`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/^text\/javascript/);
    const missing = await fetch(`${svc.gatewayUrl}/console/assets/nothing.js`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as Json).error).toMatchObject({ type: 'not_found' });
    // Nothing but this origin is ever asked for (no CDN): every request the page makes is to the gateway.
    const origins = new Set<string>();
    page.on('request', (r) => origins.add(new URL(r.url()).origin));
    await page.goto(`${svc.gatewayUrl}/console`);
    await page.locator('input[name=apiKey]').waitFor();
    expect([...origins]).toEqual([svc.gatewayUrl]);
  });

  it('refuses a traffic-scoped key at sign-in, saying why, and signs in with a full key', async () => {
    const traffic = await admin.post('/v1/projects/', { name: 'ci-bot', key_scope: 'traffic' });
    expect(traffic.status).toBe(201);
    // The field is labelled (what a screen reader announces).
    await page.getByLabel('API key').fill(traffic.json.raw_key);
    await page.click('button[type=submit]');
    const refusal = await seeText(page.locator('[role=alert]'), 'traffic scope');
    expect(refusal).toMatch(/full-scope key/);
    await shot('login-traffic-key-refused');
    expect(await page.getByTestId('nav-events').count()).toBe(0);

    await page.fill('input[name=apiKey]', 'svc_sk_not_a_real_key');
    await page.click('button[type=submit]');
    await seeText(page.locator('[role=alert]'), 'not accepted');

    await page.fill('input[name=apiKey]', svc.apiKey);
    await page.click('button[type=submit]');
    for (const id of ['nav-events', 'nav-playground', 'nav-policies', 'nav-projects', 'nav-sessions']) await page.getByTestId(id).waitFor();
    // The key is never in the URL.
    expect(page.url()).not.toContain(svc.apiKey);
  });

  it('shows events of real traffic as they arrive, filters them, and explains one in the detail pane', async () => {
    await page.getByTestId('nav-events').click();
    await seeText(page.locator('h2', { hasText: 'Events (' }), 'Events (0)');
    // Traffic after the page is open: the list updates itself (polling), no reload.
    const allowed = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'What is a B-tree?' }] }, { headers: { 'x-agent-session-id': 'agent-7' } });
    expect(allowed.choices[0]!.message.content).toBe('Hello from the fake upstream.');
    const blocked = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'a forbidden word' }] }, { headers: { 'x-agent-session-id': 'agent-7' } }).catch((e: unknown) => e);
    expect(blocked).toBeInstanceOf(OpenAI.PermissionDeniedError);
    blockedRequestId = (blocked as InstanceType<typeof OpenAI.PermissionDeniedError>).headers!.get('x-request-id')!;
    const detect = await fetch(`${svc.gatewayUrl}/v1/detect`, {
      method: 'POST',
      headers: { authorization: `Bearer ${svc.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'write to jane.doe@acme-corp.com' }),
    });
    expect(detect.status).toBe(200);

    const rows = page.getByTestId('event-row');
    await seeText(page.locator('h2', { hasText: 'Events (' }), 'Events (3)', 20_000);
    const texts = await rows.allInnerTexts();
    expect(texts).toHaveLength(3);
    // Newest first: the detect (flagged), the blocked chat, the allowed chat.
    expect(texts[0]).toMatch(/Default project[\s\S]*flagged[\s\S]*pii\/email[\s\S]*input/);
    expect(texts[1]).toMatch(/Default project[\s\S]*blocked[\s\S]*deny_list[\s\S]*input[\s\S]*gpt-4o-mini[\s\S]*ms/);
    expect(texts[2]).toMatch(/allowed[\s\S]*gpt-4o-mini/);
    await seeText(page.getByTestId('decision-chart'), /blocked 1\s+flagged 1\s+allowed 1/);
    await seeText(page.getByTestId('top-detectors'), /deny_list/);

    await page.selectOption('select[name=decision]', 'blocked');
    await seeText(page.locator('h2', { hasText: 'Events (' }), 'Events (1)');
    expect(await rows.allInnerTexts()).toEqual([expect.stringMatching(/blocked[\s\S]*deny_list/)]);

    // By keyboard, as without a mouse: focus the row, Enter.
    await rows.first().focus();
    await page.keyboard.press('Enter');
    const detail = page.getByTestId('event-detail');
    await seeText(detail, 'deny_list');
    const text = await detail.innerText();
    // What fired and where (never the content): the detector, the JSON path, the span offsets, the score.
    expect(text).toMatch(/deny_list\s+block\s+messages\[0\]\.content\s+2–11\s+deny_list\s+1\.00/);
    expect(await page.getByTestId('detail-request-id').innerText()).toBe(blockedRequestId);
    expect(await page.getByTestId('detail-limits').innerText()).toMatch(/within limits; input tokens \d+/);
    expect(text).toContain('agent-7');
    expect(text).not.toContain('forbidden word');
    await page.selectOption('select[name=decision]', '');
    await page.selectOption('select[name=detector]', 'pii/email');
    // The heading still says "Events (1)" from the decision filter until the new answer arrives: wait for the
    // row itself to change, then check it is the only one.
    await seeText(rows.first(), /flagged[\s\S]*pii\/email/);
    await seeText(page.locator('h2', { hasText: 'Events (' }), 'Events (1)');
    expect(await rows.allInnerTexts()).toEqual([expect.stringMatching(/flagged[\s\S]*pii\/email/)]);
    await page.selectOption('select[name=detector]', '');
    await seeText(page.locator('h2', { hasText: 'Events (' }), 'Events (3)');
    await shot('events');
  });

  it('groups events by agent session as a timeline', async () => {
    await page.getByTestId('nav-sessions').click();
    const row = page.getByTestId('session-row');
    await seeText(row, /agent-7\s+2\s+1/);
    await row.getByRole('button', { name: 'agent-7' }).click();
    const timeline = await seeText(page.getByTestId('session-timeline'), 'blocked');
    // Oldest first.
    expect(timeline.indexOf('allowed')).toBeLessThan(timeline.indexOf('blocked'));
  });

  it('runs a detection in the playground and highlights the span that fired, and why', async () => {
    await page.getByTestId('nav-playground').click();
    const text = 'Please send the report to jane.doe@acme-corp.com by Friday.';
    await page.getByTestId('playground-input').fill(text);
    await page.getByTestId('playground-run').click();
    const result = page.getByTestId('playground-result');
    await seeText(result, 'pii/email');
    expect(await result.locator('mark').allInnerTexts()).toEqual(['jane.doe@acme-corp.com']);
    const start = text.indexOf('jane');
    expect(await result.getByTestId('playground-span').innerText()).toMatch(new RegExp(`pii/email\\s+log\\s+${start}–${start + 22}\\s+jane\\.doe@acme-corp\\.com`));
    expect(await result.innerText()).toMatch(/flagged/);
    await shot('playground');
    // A trial run is not traffic: no event recorded.
    await svc.running.audit!.flush();
    expect((await admin.get('/v1/events/')).json.count).toBe(3);
  });

  it('edits a policy threshold, and shows the API\'s validation error next to the field', async () => {
    await page.getByTestId('nav-policies').click();
    const row = page.getByTestId('policy-row').filter({ hasText: 'default' });
    await row.getByRole('button', { name: /^Edit/ }).click();
    const editor = page.getByTestId('policy-editor');
    await editor.locator('select[name="input_detectors.0.threshold"]').selectOption('L1');
    await editor.getByRole('button', { name: 'Save policy' }).click();
    await seeText(editor, 'Saved.');
    const id = (await admin.get('/v1/policies/?is_default=true')).json.results[0].id;
    expect((await admin.get(`/v1/policies/${id}/`)).json.input_detectors).toEqual([{ detector_type: 'pii/email', threshold: 'L1', action: 'log' }]);

    const before = (await admin.get(`/v1/policies/${id}/`)).json as Json;
    await editor.locator('input[name="rate_limits.requests_per_minute"]').fill('0');
    await editor.getByRole('button', { name: 'Save policy' }).click();
    const fieldError = editor.locator('label', { has: page.locator('input[name="rate_limits.requests_per_minute"]') }).getByTestId('field-error');
    const message = await seeText(fieldError, /./);
    // The API's own message (zod: the minimum), beside the field; nothing saved.
    expect(message).toMatch(/>=\s*1|at least 1|too small/i);
    expect(await editor.locator('input[name="rate_limits.requests_per_minute"]').getAttribute('aria-invalid')).toBe('true');
    await shot('policy-invalid-limit');
    expect((await admin.get(`/v1/policies/${id}/`)).json).toEqual(before);
  });

  it('creates a project and shows its raw key once, a key that works', async () => {
    await page.getByTestId('nav-projects').click();
    await page.fill('input[name=projectName]', 'billing-bot');
    await page.getByRole('button', { name: 'Create project' }).click();
    const shown = await seeText(page.getByTestId('new-key'), 'shown once');
    expect(shown).toContain('billing-bot');
    const rawKey = await page.getByTestId('raw-key').innerText();
    expect(rawKey).toMatch(/^svc_sk_/);
    await seeText(page.getByTestId('project-row').filter({ hasText: 'billing-bot' }), apiKeyDisplayPrefix(rawKey));
    // A full-scope key (the default): it may read the management API.
    expect((await restClient(svc.gatewayUrl, rawKey).get('/v1/projects/')).status).toBe(200);
    await page.getByRole('button', { name: 'I have saved it' }).click();
    expect(await page.getByTestId('new-key').count()).toBe(0);
    expect(await page.locator('body').innerText()).not.toContain(rawKey);
  });
});
