/**
 * The /settings page in a real browser: a person signs in with username and password, creates an
 * API token (shown once), uses it, revokes it, signs out. Also what a browser cannot easily do:
 * posts from another site, oversized forms, another user's token id.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { crmSettingsFormBytesMax } from "../../src/core/limits.ts";
import { sharedBrowser } from "../support/browser.ts";
import { type CrmProcess, runCrmTool, sqliteBackend, startCrm } from "./support/crm.ts";

const browser = sharedBrowser();
const backend = sqliteBackend();
const password = { alice: "correct horse battery", bob: "tr0ub4dor&3-staple" };
let crm: CrmProcess;
/** A browser test signs in (argon2id) and loads several pages: more than bun's default 5 s. */
const browserTestMs = 30_000;

async function addUser(db: string, username: string, secret: string) {
  const r = await runCrmTool(db, ["user", "add", "--username", username, "--password-stdin"], `${secret}\n`);
  expect(r.code).toBe(0);
}

beforeAll(async () => {
  const db = await backend.freshDb();
  await addUser(db, "alice", password.alice);
  await addUser(db, "bob", password.bob);
  crm = await startCrm(db);
});
afterAll(() => crm?.stop());

async function signIn(page: Page, username: string, secret: string) {
  await page.goto(`${crm.url}/settings`);
  await page.fill("#username", username);
  await page.fill("#password", secret);
  await page.click("#sign-in");
}

async function createToken(page: Page, name: string): Promise<string> {
  await page.fill("#token-name", name);
  await page.click("#create-token");
  return (await page.textContent("#new-token"))!.trim();
}

describe("/settings in Chromium", () => {
  test(
    "a wrong password and an unknown user get the same refusal, and no session",
    async () => {
      const page = await (await browser()).newPage();
      for (const [user, secret] of [
        ["alice", "not her password"],
        ["mallory", "whatever-123"],
      ] as const) {
        await signIn(page, user, secret);
        expect(await page.textContent("#error")).toBe("Wrong username or password.");
        expect(await page.locator("#create-token").count()).toBe(0);
      }
      await page.close();
    },
    browserTestMs,
  );

  test(
    "sign in, create a token that works, see it listed without its secret, revoke it, and it stops working",
    async () => {
      const context = await (await browser()).newContext();
      const page = await context.newPage();
      await signIn(page, "alice", password.alice);
      expect(await page.textContent("h1")).toContain("API tokens of alice");

      const token = await createToken(page, "laptop script");
      expect(token).toMatch(/^crm_[A-Za-z0-9_-]{43}$/);
      expect((await crm.call(token, "GET", "/api/v1/leads")).status).toBe(200);

      // The cookie is HttpOnly and SameSite=Strict, scoped to /settings.
      const [cookie] = await context.cookies();
      expect(cookie).toMatchObject({ name: "crm_session", httpOnly: true, sameSite: "Strict", path: "/settings" });

      // Shown once: a reload lists the token by name and prefix, not its secret.
      await page.goto(`${crm.url}/settings`);
      expect(await page.locator("#new-token").count()).toBe(0);
      expect(await page.content()).not.toContain(token);
      const row = page.locator("#tokens tbody tr", { hasText: "laptop script" });
      expect(await row.getAttribute("data-state")).toBe("active");
      expect(await row.textContent()).toContain(token.slice(0, 10));

      await row.locator("button.revoke").click();
      expect(await page.locator("#tokens tbody tr", { hasText: "laptop script" }).getAttribute("data-state")).toBe("revoked");
      expect((await crm.call(token, "GET", "/api/v1/leads")).status).toBe(401);
      await context.close();
    },
    browserTestMs,
  );

  test(
    "sign out ends the session: the old cookie no longer opens the page",
    async () => {
      const context = await (await browser()).newContext();
      const page = await context.newPage();
      await signIn(page, "alice", password.alice);
      const [cookie] = await context.cookies();
      await page.click("#sign-out");
      expect(await page.locator("#sign-in").count()).toBe(1);
      const replay = await fetch(`${crm.url}/settings`, { headers: { cookie: `crm_session=${cookie!.value}` } });
      expect(await replay.text()).toContain('id="sign-in"');
      await context.close();
    },
    browserTestMs,
  );

  test("the page forbids framing and scripts, and is never cached", async () => {
    const response = await fetch(`${crm.url}/settings`);
    expect(response.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(response.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(response.headers.get("cache-control")).toBe("no-store");
  });
});

describe("/settings posts a browser would not make", () => {
  async function sessionCookie(username: "alice" | "bob"): Promise<string> {
    const response = await fetch(`${crm.url}/settings/sign-in`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ username, password: password[username] }),
    });
    expect(response.status).toBe(303);
    return /crm_session=([^;]+)/.exec(response.headers.get("set-cookie")!)![1]!;
  }

  function postForm(cookie: string, path: string, form: Record<string, string>, headers: Record<string, string> = {}) {
    return fetch(`${crm.url}${path}`, {
      method: "POST",
      redirect: "manual",
      headers: { cookie: `crm_session=${cookie}`, "content-type": "application/x-www-form-urlencoded", ...headers },
      body: new URLSearchParams(form),
    });
  }

  async function tokenNames(token: string): Promise<string[]> {
    return (await crm.call(token, "GET", "/api/v1/settings/tokens")).body.data.map((t: { name: string }) => t.name);
  }

  test("a post from another site's page is refused with 403 and creates nothing", async () => {
    const cookie = await sessionCookie("alice");
    const response = await postForm(cookie, "/settings/tokens", { name: "planted" }, { origin: "http://evil.example" });
    expect(response.status).toBe(403);
    const same = await postForm(cookie, "/settings/tokens", { name: "mine" }, { origin: crm.url });
    expect(same.status).toBe(200);
    const token = /id="new-token">([^<]+)</.exec(await same.text())![1]!;
    expect(await tokenNames(token)).not.toContain("planted");
  });

  test("an empty form is refused on the page; one at the size limit is read; one byte past it is 413", async () => {
    const cookie = await sessionCookie("alice");
    const overhead = "name=".length;
    const empty = await postForm(cookie, "/settings/tokens", {});
    expect(empty.status).toBe(400);
    expect(await empty.text()).toContain("A token needs a name.");
    const fits = await fetch(`${crm.url}/settings/tokens`, {
      method: "POST",
      headers: { cookie: `crm_session=${cookie}`, "content-type": "application/x-www-form-urlencoded" },
      body: `name=${"x".repeat(crmSettingsFormBytesMax - overhead)}`,
    });
    expect(fits.status).toBe(400); // read, then refused for its name's length, not its size
    expect(await fits.text()).toContain("at most 100 characters");
    const past = await fetch(`${crm.url}/settings/tokens`, {
      method: "POST",
      headers: { cookie: `crm_session=${cookie}`, "content-type": "application/x-www-form-urlencoded" },
      body: `name=${"x".repeat(crmSettingsFormBytesMax - overhead + 1)}`,
    });
    expect(past.status).toBe(413);
  });

  test("a token name of 100 characters is taken, 101 is refused", async () => {
    const cookie = await sessionCookie("bob");
    const ok = await postForm(cookie, "/settings/tokens", { name: "n".repeat(100) });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('id="new-token"');
    const long = await postForm(cookie, "/settings/tokens", { name: "n".repeat(101) });
    expect(long.status).toBe(400);
    expect(await long.text()).not.toContain('id="new-token"');
  });

  test("another user cannot revoke alice's token by its id", async () => {
    const alice = await sessionCookie("alice");
    const created = await postForm(alice, "/settings/tokens", { name: "keep me" });
    const html = await created.text();
    const token = /id="new-token">([^<]+)</.exec(html)![1]!;
    const id = /data-token-id="(\d+)"/.exec(html)![1]!;
    const bob = await sessionCookie("bob");
    const attempt = await postForm(bob, `/settings/tokens/${id}/revoke`, {});
    expect(attempt.status).toBe(400);
    expect((await crm.call(token, "GET", "/api/v1/leads")).status).toBe(200);
  });

  test("without a session, creating and revoking are refused with 401", async () => {
    expect((await postForm("forged", "/settings/tokens", { name: "x" })).status).toBe(401);
    expect((await postForm("forged", "/settings/tokens/1/revoke", {})).status).toBe(401);
  });
});
