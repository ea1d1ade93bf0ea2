/**
 * Routes of the admin pages under /settings: custom fields, sharing (defaults and rules),
 * validation rules, workflow rules and flows. Only a signed-in admin reaches them: without a
 * session a page is the sign-in form (a post is 401), and a signed-in user who is not an admin
 * gets 403 — checked against the users table on every request, so a session outliving its
 * user's admin rights does not keep them.
 *
 * A post turns the form into the settings API's body (admin-forms.ts) and calls the same
 * functions the API does, in one transaction: success redirects back to the page (a reload
 * repeats nothing); a refusal shows the page again with what was typed, the API's status and its
 * details. Changing a sharing rule or a rule definition is a delete and a create in one
 * transaction, since the API offers no change of them; the pages say so.
 */
import { isSvcError, SvcError } from "../../core/errors.ts";
import { crmAdminFormBytesMax } from "../../core/limits.ts";
import type { RequestContext, RouteTable } from "../../http/route.ts";
import { loadRoles, RoleTree } from "../auth/roles.ts";
import { activeUser, type User } from "../auth/users.ts";
import { addCustomField, listCustomFields, parseCustomFieldSpec } from "../objects/custom-fields.ts";
import { loadSchema, type ObjectSchema } from "../objects/schema.ts";
import { addRuleDefinition, deleteRuleDefinition, listRuleDefinitions } from "../records/rule-definitions.ts";
import { type CrmObject, crmObjects, type FieldError, recordErrorField } from "../rules/record.ts";
import type { RuleKind } from "../rules/rule-set.ts";
import { addSharingRule, deleteSharingRule, loadDefaultAccess, loadSharingRules, setDefaultAccess, sharingRuleView } from "../sharing/sharing-rules.ts";
import type { Db, Queryable } from "../store/db.ts";
import {
  customFieldBody,
  type FormBody,
  inlineErrors,
  ruleBody,
  ruleForm,
  type Schemas,
  sharingDefaultsBody,
  sharingRuleBody,
  sharingRuleForm,
} from "./admin-forms.ts";
import { fieldsPage, forbiddenPage, sharingPage } from "./admin-pages.ts";
import type { BrowserSessions } from "./browser-sessions.ts";
import { type FormView, newForm } from "./form-html.ts";
import { page, receiveForm, seeOther, sessionId } from "./form-posts.ts";
import { rulePages, rulesPage } from "./rule-pages.ts";
import { signInPage } from "./settings-page.ts";

/** What a refused change answers: the API's status and details. */
interface Refusal {
  status: number;
  details: FieldError[];
}

/** The status and details the settings API would have answered for `error`; other errors go on up (500). */
function refusal(e: unknown): Refusal {
  if (!isSvcError(e)) throw e;
  if (e.code === "invalid") return { status: 422, details: Array.isArray(e.details) ? (e.details as FieldError[]) : [] };
  if (e.code === "conflict") return { status: 409, details: [{ field: recordErrorField, message: e.message }] };
  if (e.code === "not_found") return { status: 404, details: [{ field: recordErrorField, message: e.message }] };
  throw e;
}

/** A form shown again after a refusal: what was typed, and the problems beside the inputs they came from. */
function refusedForm(form: URLSearchParams, body: FormBody, details: FieldError[]): FormView {
  return { values: form, details, inline: inlineErrors(details, body.sources) };
}

/** A path id, or null when it cannot name anything. */
function pathId(ctx: RequestContext): number | null {
  const text = ctx.params.id ?? "";
  return /^[1-9]\d{0,14}$/.test(text) ? Number(text) : null;
}

async function loadSchemas(q: Queryable): Promise<Schemas> {
  const out = new Map<CrmObject, ObjectSchema>();
  for (const object of crmObjects) out.set(object, await loadSchema(q, object));
  return out;
}

export function adminRoutes(db: Db, sessions: BrowserSessions): RouteTable {
  /** The signed-in admin, or the answer anyone else gets. */
  async function signedInAdmin(ctx: RequestContext, posting: boolean): Promise<User | Response> {
    const session = sessions.user(sessionId(ctx.req));
    if (session === null) return posting ? page(signInPage("Your session has ended; sign in again."), 401) : page(signInPage());
    // Read again on every request: an admin demoted or disabled (by the CLI, say) loses these pages at once.
    const user = await activeUser(db, session.id);
    if (user === null) return posting ? page(signInPage("Your session has ended; sign in again."), 401) : page(signInPage());
    if (!user.isAdmin) return page(forbiddenPage(session), 403);
    return user;
  }

  const view =
    (render: (ctx: RequestContext, user: User) => Promise<Response>) =>
    async (ctx: RequestContext): Promise<Response> => {
      const user = await signedInAdmin(ctx, false);
      return user instanceof Response ? user : render(ctx, user);
    };

  const post =
    (action: (ctx: RequestContext, user: User, form: URLSearchParams) => Promise<Response>) =>
    (ctx: RequestContext): Promise<Response> =>
      receiveForm(ctx.req, crmAdminFormBytesMax, async (form) => {
        const user = await signedInAdmin(ctx, true);
        return user instanceof Response ? user : action(ctx, user, form);
      });

  /**
   * Sends a form's body to `change` in one transaction. Null when it was made; else the refusal,
   * with the form's own problems (a JSON input that is not JSON) instead of sending anything.
   */
  async function apply(body: FormBody, change: (tx: Queryable) => Promise<unknown>): Promise<Refusal | null> {
    if (body.problems.length > 0) return { status: 422, details: body.problems };
    try {
      await db.write(change);
      return null;
    } catch (error) {
      return refusal(error);
    }
  }

  // ---- custom fields ----

  async function fields(user: User, form: FormView = newForm, status = 200): Promise<Response> {
    return page(fieldsPage({ user, fields: await listCustomFields(db), form }), status);
  }

  // ---- sharing ----

  interface SharingState {
    defaultsForm?: FormView;
    ruleForm?: FormView;
    replacing?: number;
    notice?: string;
  }

  async function sharing(user: User, state: SharingState = {}, status = 200): Promise<Response> {
    const roles = new RoleTree(await loadRoles(db));
    const html = sharingPage({
      user,
      defaults: await loadDefaultAccess(db),
      rules: (await loadSharingRules(db)).map((r) => sharingRuleView(r, roles)),
      roles: roles.roles.map((r) => r.name),
      schemas: await loadSchemas(db),
      defaultsForm: state.defaultsForm ?? newForm,
      ruleForm: state.ruleForm ?? newForm,
      ...(state.replacing === undefined ? {} : { replacing: state.replacing }),
      ...(state.notice === undefined ? {} : { notice: state.notice }),
    });
    return page(html, status);
  }

  /** Adds a sharing rule from the form, replacing rule `replacing` in the same transaction when given. */
  async function saveSharingRule(user: User, form: URLSearchParams, replacing?: number): Promise<Response> {
    const body = sharingRuleBody(form, await loadSchemas(db));
    const refused = await apply(body, async (tx) => {
      if (replacing !== undefined && !(await deleteSharingRule(tx, replacing))) throw new SvcError("not_found", `no sharing rule ${replacing}`);
      await addSharingRule(tx, body.body);
    });
    if (refused === null) return seeOther("/settings/sharing");
    return sharing(user, { ruleForm: refusedForm(form, body, refused.details), ...(replacing === undefined ? {} : { replacing }) }, refused.status);
  }

  // ---- validation rules, workflow rules, flows ----

  interface RulesState {
    form?: FormView;
    replacing?: number;
    notice?: string;
  }

  async function rules(kind: RuleKind, user: User, state: RulesState = {}, status = 200): Promise<Response> {
    const html = rulesPage({
      kind,
      user,
      definitions: await listRuleDefinitions(db, kind),
      schemas: await loadSchemas(db),
      form: state.form ?? newForm,
      ...(state.replacing === undefined ? {} : { replacing: state.replacing }),
      ...(state.notice === undefined ? {} : { notice: state.notice }),
    });
    return page(html, status);
  }

  async function saveRule(kind: RuleKind, path: string, user: User, form: URLSearchParams, replacing?: number): Promise<Response> {
    const body = ruleBody(kind, form, await loadSchemas(db));
    const refused = await apply(body, async (tx) => {
      if (replacing !== undefined && !(await deleteRuleDefinition(tx, kind, replacing))) throw new SvcError("not_found", `no ${kind} rule ${replacing}`);
      await addRuleDefinition(tx, kind, body.body);
    });
    if (refused === null) return seeOther(`/settings/${path}`);
    return rules(kind, user, { form: refusedForm(form, body, refused.details), ...(replacing === undefined ? {} : { replacing }) }, refused.status);
  }

  const routes: RouteTable = {
    "/settings/fields": {
      GET: view((_, user) => fields(user)),
      POST: post(async (_, user, form) => {
        const body = customFieldBody(form);
        const refused = await apply(body, (tx) => addCustomField(tx, parseCustomFieldSpec(body.body)));
        return refused === null ? seeOther("/settings/fields") : fields(user, refusedForm(form, body, refused.details), refused.status);
      }),
    },
    "/settings/sharing": {
      GET: view(async (ctx, user) => {
        const edit = ctx.url.searchParams.get("edit");
        if (edit === null) return sharing(user);
        const roles = new RoleTree(await loadRoles(db));
        const rule = (await loadSharingRules(db)).find((r) => String(r.id) === edit);
        if (rule === undefined) return sharing(user, { notice: `No sharing rule ${edit}: it may have been deleted or changed.` }, 404);
        const values = sharingRuleForm(sharingRuleView(rule, roles), await loadSchemas(db));
        if (values === null) return sharing(user, { notice: `Sharing rule ${edit} has criteria this form cannot show exactly; change it through the API.` });
        return sharing(user, { ruleForm: { ...newForm, values }, replacing: rule.id });
      }),
    },
    "/settings/sharing/defaults": {
      POST: post(async (_, user, form) => {
        const body = sharingDefaultsBody(form);
        const refused = await apply(body, (tx) => setDefaultAccess(tx, body.body));
        return refused === null ? seeOther("/settings/sharing") : sharing(user, { defaultsForm: refusedForm(form, body, refused.details) }, refused.status);
      }),
    },
    "/settings/sharing/rules": {
      POST: post((_, user, form) => saveSharingRule(user, form)),
    },
    "/settings/sharing/rules/:id/replace": {
      POST: post(async (ctx, user, form) => {
        const id = pathId(ctx);
        return id === null ? sharing(user, { notice: "No such sharing rule." }, 404) : saveSharingRule(user, form, id);
      }),
    },
    "/settings/sharing/rules/:id/delete": {
      POST: post(async (ctx, user) => {
        const id = pathId(ctx);
        const deleted = id !== null && (await db.write((tx) => deleteSharingRule(tx, id)));
        return deleted ? seeOther("/settings/sharing") : sharing(user, { notice: `No sharing rule ${ctx.params.id}: it may have been deleted already.` }, 404);
      }),
    },
  };

  for (const { kind, path, one } of rulePages) {
    routes[`/settings/${path}`] = {
      GET: view(async (ctx, user) => {
        const edit = ctx.url.searchParams.get("edit");
        if (edit === null) return rules(kind, user);
        const definition = (await listRuleDefinitions(db, kind)).find((d) => String(d.id) === edit);
        if (definition === undefined) return rules(kind, user, { notice: `No ${one} ${edit}: it may have been deleted or changed.` }, 404);
        const values = ruleForm(kind, definition, await loadSchemas(db));
        if (values === null)
          return rules(kind, user, { notice: `The ${one} ${edit} writes a value this form cannot show exactly; change it through the API.` });
        return rules(kind, user, { form: { ...newForm, values }, replacing: definition.id });
      }),
      POST: post((_, user, form) => saveRule(kind, path, user, form)),
    };
    routes[`/settings/${path}/:id/replace`] = {
      POST: post(async (ctx, user, form) => {
        const id = pathId(ctx);
        return id === null ? rules(kind, user, { notice: `No such ${one}.` }, 404) : saveRule(kind, path, user, form, id);
      }),
    };
    routes[`/settings/${path}/:id/delete`] = {
      POST: post(async (ctx, user) => {
        const id = pathId(ctx);
        const deleted = id !== null && (await db.write((tx) => deleteRuleDefinition(tx, kind, id)));
        return deleted ? seeOther(`/settings/${path}`) : rules(kind, user, { notice: `No ${one} ${ctx.params.id}: it may have been deleted already.` }, 404);
      }),
    };
  }
  return routes;
}
