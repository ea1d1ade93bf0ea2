/**
 * CLIENT TRACKING, TRACKINGINFO, GETREDIR and CACHING: a client's side of client-side caching
 * (tracking.ts holds the server's). Options, checks and errors are Redis 7.0's, in its order.
 */
import { parseInt64 } from "../text/args.ts";
import { KvError, notAnInteger, syntaxError } from "../text/errors.ts";
import type { Exec } from "../kit/spec.ts";

const trackingError = (text: string) => new KvError(`ERR ${text}`);

/** Whether one prefix starts the other (Redis refuses overlapping prefixes for one client). */
const overlap = (a: string, b: string) => a.startsWith(b) || b.startsWith(a);

/** CLIENT TRACKING ON|OFF [REDIRECT id] [BCAST] [PREFIX p]... [OPTIN] [OPTOUT] [NOLOOP] */
export function clientTracking(x: Exec, argv: string[]): void {
  let redirect = 0;
  let bcast = false;
  let optin = false;
  let optout = false;
  let noloop = false;
  const prefixes: string[] = [];
  for (let i = 3; i < argv.length; i++) {
    const word = argv[i]!.toLowerCase();
    const more = i + 1 < argv.length;
    if (word === "redirect" && more) {
      if (redirect !== 0) throw trackingError("A client can only redirect to a single other client");
      const id = parseInt64(argv[++i]!);
      if (id === null) throw notAnInteger();
      // The target must exist now; it may still leave later (then messages are "redir-broken").
      if (id <= 0n || id > BigInt(Number.MAX_SAFE_INTEGER) || !x.engine.sessions.has(Number(id))) {
        throw trackingError("The client ID you want redirect to does not exist");
      }
      redirect = Number(id);
    } else if (word === "bcast") bcast = true;
    else if (word === "optin") optin = true;
    else if (word === "optout") optout = true;
    else if (word === "noloop") noloop = true;
    else if (word === "prefix" && more) prefixes.push(argv[++i]!);
    else throw syntaxError();
  }
  const mode = argv[2]!.toLowerCase();
  const current = x.session.tracking;
  if (mode === "off") x.engine.tracking.disable(x.session);
  else if (mode === "on") {
    if (!bcast && prefixes.length > 0) throw trackingError("PREFIX option requires BCAST mode to be enabled");
    if (current !== null && current.bcast !== bcast) {
      throw trackingError("You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.");
    }
    if (bcast && (optin || optout)) throw trackingError("OPTIN and OPTOUT are not compatible with BCAST");
    if (optin && optout) throw trackingError("You can't specify both OPTIN mode and OPTOUT mode");
    if ((optin && current?.optout) || (optout && current?.optin)) {
      throw trackingError("You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.");
    }
    if (bcast) checkPrefixes(current?.prefixes ?? [], prefixes);
    x.engine.tracking.enable(x.session, { redirect, bcast, optin, optout, noloop }, prefixes);
  } else throw syntaxError();
  x.reply.simple("OK");
}

/** Refuses a prefix that overlaps one the client has, or another one given with it. */
function checkPrefixes(existing: readonly string[], given: readonly string[]): void {
  for (let i = 0; i < given.length; i++) {
    const prefix = given[i]!;
    // The client's prefixes are tried in byte order, as Redis walks its radix tree of them: the
    // first that overlaps is the one named.
    const taken = [...existing].sort().find((other) => overlap(other, prefix));
    if (taken !== undefined) {
      throw trackingError(`Prefix '${prefix}' overlaps with an existing prefix '${taken}'. Prefixes for a single client must not overlap.`);
    }
    const sibling = given.slice(i + 1).find((other) => overlap(other, prefix));
    if (sibling !== undefined) {
      throw trackingError(`Prefix '${prefix}' overlaps with another provided prefix '${sibling}'. Prefixes for a single client must not overlap.`);
    }
  }
}

/** CLIENT TRACKINGINFO: flags, redirect and prefixes. */
export function clientTrackingInfo(x: Exec): void {
  const t = x.session.tracking;
  const flags = [t === null ? "off" : "on"];
  if (t !== null) {
    if (t.bcast) flags.push("bcast");
    if (t.optin) flags.push("optin", ...(t.caching ? ["caching-yes"] : []));
    if (t.optout) flags.push("optout", ...(t.caching ? ["caching-no"] : []));
    if (t.noloop) flags.push("noloop");
    if (t.brokenRedirect) flags.push("broken_redirect");
  }
  const r = x.reply;
  r.map(3);
  r.bulk("flags");
  r.set(flags.length);
  for (const flag of flags) r.bulk(flag);
  r.bulk("redirect");
  r.integer(t === null ? -1 : t.redirect);
  r.bulk("prefixes");
  const prefixes = t?.bcast ? [...t.prefixes].sort() : [];
  r.array(prefixes.length);
  for (const prefix of prefixes) r.bulk(prefix);
}

/** CLIENT CACHING YES|NO: whether the next command's reads are remembered (OPTIN / OPTOUT). */
export function clientCaching(x: Exec, argv: string[]): void {
  const t = x.session.tracking;
  if (t === null) throw trackingError("CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled");
  const choice = argv[2]!.toLowerCase();
  if (choice === "yes") {
    if (!t.optin) throw trackingError("CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.");
  } else if (choice === "no") {
    if (!t.optout) throw trackingError("CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
  } else throw syntaxError();
  t.caching = true;
  x.reply.simple("OK");
}
