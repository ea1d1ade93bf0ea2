/**
 * The frame every /settings page shares: the document, its one stylesheet (inline: the page's CSP
 * allows inline styles and nothing else), and for a signed-in user the links between pages —
 * an admin's include the admin pages, which nobody else is shown.
 */
import type { User } from "../auth/users.ts";
import { escapeHtml } from "./html.ts";

const style = `
  body { font: 15px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #1d1d1f; }
  h1 { font-size: 1.4rem; } h2 { font-size: 1.15rem; margin-top: 2rem; } table { border-collapse: collapse; width: 100%; margin: 1rem 0; }
  th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #ddd; vertical-align: top; }
  .error, .field-error { color: #b00020; } .secret { font-family: ui-monospace, monospace; background: #f4f4f4; padding: .5rem; word-break: break-all; }
  form.inline { display: inline; } label { display: block; margin: .5rem 0; }
  nav a { margin-right: 1rem; } nav { margin-bottom: 1rem; }
  fieldset { border: 1px solid #ddd; margin: .75rem 0; } .row label { display: inline-block; margin-right: .75rem; }
  textarea { width: 100%; font-family: ui-monospace, monospace; } pre { white-space: pre-wrap; margin: 0; font-size: 13px; }
  .note { color: #555; } .field-error { display: block; font-size: 14px; }`;

/** The signed-in user's pages, in the order the links show them. */
const pages: { path: string; title: string; adminOnly: boolean }[] = [
  { path: "/settings", title: "API tokens", adminOnly: false },
  { path: "/settings/fields", title: "Custom fields", adminOnly: true },
  { path: "/settings/sharing", title: "Sharing", adminOnly: true },
  { path: "/settings/validation-rules", title: "Validation rules", adminOnly: true },
  { path: "/settings/workflow-rules", title: "Workflow rules", adminOnly: true },
  { path: "/settings/flows", title: "Flows", adminOnly: true },
];

function nav(user: User): string {
  const links = pages.filter((p) => user.isAdmin || !p.adminOnly).map((p) => `<a href="${p.path}">${escapeHtml(p.title)}</a>`);
  return `<nav id="nav">${links.join("")}</nav>
<form method="post" action="/settings/sign-out"><button type="submit" id="sign-out">Sign out ${escapeHtml(user.username)}</button></form>`;
}

/** A whole page; `user` is the signed-in user (null on the sign-in page). */
export function layout(title: string, body: string, user: User | null = null): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · svc crm</title><style>${style}</style></head>
<body>${user === null ? "" : nav(user)}${body}</body></html>`;
}
