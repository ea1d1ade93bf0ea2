/**
 * ACL command rules (GETUSER's "commands", the end of an ACL LIST line) in a form redis-server and
 * svc agree on. Redis writes the category rules first (+@all or -@all, then the +@cat/-@cat its
 * algorithm chose, in its order), then the single +command/-command rules in its command table's
 * hash order, which is random per process; svc writes those in a fixed order. So the leading
 * category part is kept as it is and the single rules after it are sorted. Whatever comes before
 * the first rule (an ACL LIST line's name, flags, passwords, keys and channels) is kept. Single
 * rules about commands in `leaveOut` (one server's own) are dropped.
 */
export function normaliseCommandRules(text: string, leaveOut: ReadonlySet<string>): string {
  const words = text.split(" ");
  let at = words.findIndex((word) => word.startsWith("+") || word.startsWith("-"));
  if (at < 0) return text;
  const head = words.slice(0, at);
  while (at < words.length && /^[+-]@/.test(words[at]!)) head.push(words[at++]!);
  const singles = words.slice(at).filter((rule) => !leaveOut.has(rule.slice(1).toLowerCase()));
  return [...head, ...singles.sort()].join(" ");
}

/**
 * An ACL LIST line with each part normalised on its own: the user's root rules, then each
 * selector "(…)" after them, whose single command rules are sorted within its parentheses.
 */
export function normaliseAclLine(line: string, leaveOut: ReadonlySet<string>): string {
  const open = line.indexOf(" (");
  if (open < 0) return normaliseCommandRules(line, leaveOut);
  const selectors = line
    .slice(open + 2, -1)
    .split(") (")
    .map((inner) => `(${normaliseCommandRules(inner, leaveOut)})`);
  return [normaliseCommandRules(line.slice(0, open), leaveOut), ...selectors].join(" ");
}
