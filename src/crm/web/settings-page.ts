/**
 * The HTML of the /settings page: a sign-in form, or the signed-in user's API tokens with forms to
 * create and revoke them (an admin's other pages: admin-pages.ts, rule-pages.ts). Plain
 * server-rendered forms, no script: it works with any browser, and every action is an ordinary
 * POST that the server checks (session cookie, same origin).
 */
import { crmTokenNameCharsMax } from "../../core/limits.ts";
import type { TokenInfo } from "../auth/tokens.ts";
import type { User } from "../auth/users.ts";
import { escapeHtml } from "./html.ts";
import { layout } from "./layout.ts";

export function signInPage(error: string | null = null, username = ""): string {
  const problem = error === null ? "" : `<p class="error" id="error" role="alert">${escapeHtml(error)}</p>`;
  return layout(
    "Sign in",
    `
<h1>Sign in to manage your API tokens</h1>${problem}
<form method="post" action="/settings/sign-in">
  <label>Username <input name="username" id="username" autocomplete="username" required value="${escapeHtml(username)}"></label>
  <label>Password <input name="password" id="password" type="password" autocomplete="current-password" required></label>
  <button type="submit" id="sign-in">Sign in</button>
</form>`,
  );
}

export interface TokensView {
  user: User;
  /** The user's tokens, newest first, revoked ones included. */
  tokens: TokenInfo[];
  /** A token just created: its secret is shown this once. */
  created?: { name: string; token: string };
  error?: string;
}

function tokenRow(token: TokenInfo): string {
  const state = token.revoked_at === null ? "active" : `revoked ${escapeHtml(token.revoked_at)}`;
  const action =
    token.revoked_at !== null
      ? ""
      : `
      <form class="inline" method="post" action="/settings/tokens/${token.id}/revoke">
        <button type="submit" class="revoke">Revoke</button>
      </form>`;
  return `
  <tr data-token-id="${token.id}" data-state="${token.revoked_at === null ? "active" : "revoked"}">
    <td class="name">${escapeHtml(token.name)}</td><td><code>${escapeHtml(token.prefix)}…</code></td>
    <td>${escapeHtml(token.created_at)}</td><td class="state">${state}</td>
    <td>${action}</td>
  </tr>`;
}

export function tokensPage(view: TokensView): string {
  const created =
    view.created === undefined
      ? ""
      : `
<section id="created">
  <p>Token <strong>${escapeHtml(view.created.name)}</strong> created. Copy it now: it is not shown again.</p>
  <p class="secret" id="new-token">${escapeHtml(view.created.token)}</p>
</section>`;
  const problem = view.error === undefined ? "" : `<p class="error" id="error" role="alert">${escapeHtml(view.error)}</p>`;
  const rows = view.tokens.length === 0 ? `<tr><td colspan="5">No tokens yet.</td></tr>` : view.tokens.map(tokenRow).join("");
  return layout(
    "API tokens",
    `
<h1>API tokens of ${escapeHtml(view.user.username)}</h1>
${problem}${created}
<form method="post" action="/settings/tokens">
  <label>New token name <input name="name" id="token-name" required maxlength="${crmTokenNameCharsMax}"></label>
  <button type="submit" id="create-token">Create token</button>
</form>
<table id="tokens">
  <thead><tr><th>Name</th><th>Starts with</th><th>Created</th><th>State</th><th></th></tr></thead>
  <tbody>${rows}
  </tbody>
</table>
<p>Send a token as <code>Authorization: Bearer &lt;token&gt;</code> to <code>/api/v1</code>.</p>`,
    view.user,
  );
}
