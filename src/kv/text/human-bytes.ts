/**
 * Byte counts for people, as Redis writes them in INFO and MEMORY DOCTOR.
 */

/** A byte count as Redis's bytesToHuman writes it: 917.20K, 6.70M, 200B. */
export function humanBytes(n: number): string {
  const units = ["K", "M", "G", "T", "P"];
  if (n < 1024) return `${n}B`;
  for (let i = 0; i < units.length; i++) {
    const scaled = n / 1024 ** (i + 1);
    if (scaled < 1024 || i === units.length - 1) return `${scaled.toFixed(2)}${units[i]}`;
  }
  return `${n}B`;
}
