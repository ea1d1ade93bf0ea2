/**
 * An option word as Redis compares it: strcasecmp on a C string, so ASCII case is folded and the
 * argument counts only up to its first NUL byte ("km\0x" is the unit km). Lower-casing latin1
 * text folds non-ASCII letters too, but none of them becomes ASCII, so no keyword can match
 * differently.
 */
export function optionWord(arg: string): string {
  const nul = arg.indexOf("\0");
  return (nul === -1 ? arg : arg.slice(0, nul)).toLowerCase();
}
