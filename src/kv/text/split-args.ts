/**
 * A line split into words as Redis's sdssplitargs splits it: for inline commands, FUNCTION LOAD's
 * first line and ACL selectors.
 */

const escapes: Record<string, string> = { n: "\n", r: "\r", t: "\t", b: "\b", a: "\x07" };
const isSpace = (c: string) => c === " " || c === "\n" || c === "\r" || c === "\t" || c === "\v" || c === "\f";
const isHex = (c: string | undefined) => c !== undefined && /[0-9a-fA-F]/.test(c);

/**
 * Splits an inline command as Redis's sdssplitargs does: spaces separate arguments; "double
 * quotes" allow \n \r \t \b \a \\ \" and \xHH escapes; 'single quotes' allow \'; a closing quote
 * must be followed by a space or the end. Returns null for unbalanced quotes.
 */
export function splitInlineArgs(line: string): string[] | null {
  const args: string[] = [];
  let i = 0;
  while (true) {
    while (i < line.length && isSpace(line[i]!)) i++;
    if (i >= line.length) return args;
    let current = "";
    let quote: '"' | "'" | null = null;
    for (;;) {
      const c = line[i];
      if (quote === '"') {
        if (c === undefined) return null;
        if (c === "\\" && line[i + 1] === "x" && isHex(line[i + 2]) && isHex(line[i + 3])) {
          current += String.fromCharCode(Number.parseInt(line.slice(i + 2, i + 4), 16));
          i += 4;
        } else if (c === "\\" && line[i + 1] !== undefined) {
          current += escapes[line[i + 1]!] ?? line[i + 1];
          i += 2;
        } else if (c === '"') {
          if (line[i + 1] !== undefined && !isSpace(line[i + 1]!)) return null;
          i++;
          break;
        } else {
          current += c;
          i++;
        }
      } else if (quote === "'") {
        if (c === undefined) return null;
        if (c === "\\" && line[i + 1] === "'") {
          current += "'";
          i += 2;
        } else if (c === "'") {
          if (line[i + 1] !== undefined && !isSpace(line[i + 1]!)) return null;
          i++;
          break;
        } else {
          current += c;
          i++;
        }
      } else if (c === undefined || isSpace(c)) break;
      else if (c === '"' || c === "'") {
        quote = c;
        i++;
      } else {
        current += c;
        i++;
      }
    }
    args.push(current);
  }
}
