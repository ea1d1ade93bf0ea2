/**
 * Arguments that must not be shown: SLOWLOG and MONITOR show every command as sent, except the
 * passwords in it, which Redis replaces with "(redacted)" — AUTH's arguments, HELLO's AUTH
 * username and password, and the value of a CONFIG SET of a password setting.
 */
import type { CommandShape } from "../kit/command-info.ts";

const redacted = "(redacted)";
/** Parameters whose values CONFIG SET keeps out of sight, as Redis does. */
const secretParams = new Set(["requirepass", "masterauth", "masteruser"]);

/** `argv` with its secrets replaced; the same array when it has none. */
export function redactSecrets(spec: CommandShape, argv: readonly string[]): readonly string[] {
  if (spec.name === "auth") return [argv[0]!, ...argv.slice(1).map(() => redacted)];
  if (spec.name === "hello") {
    const shown = argv.slice();
    for (let i = 2; i < shown.length; i++) {
      if (shown[i]!.toLowerCase() === "auth") shown.fill(redacted, i + 1, Math.min(i + 3, shown.length));
    }
    return shown;
  }
  if (spec.name === "config|set") {
    const shown = argv.slice();
    for (let i = 2; i + 1 < shown.length; i += 2) if (secretParams.has(shown[i]!.toLowerCase())) shown[i + 1] = redacted;
    return shown;
  }
  return argv;
}
