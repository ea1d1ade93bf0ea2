/**
 * The broker's transport settings (spec: Transport): TLS for its listeners and the origins its
 * HTTP API sends CORS headers to. Checked at start, so a typo stops the broker with a message
 * instead of serving plain text or answering browsers it should not.
 */
import { readFileSync } from "node:fs";
import { SvcError } from "../core/errors.ts";

/** PEM text of a certificate chain and its private key, as Bun's listeners take them. */
export interface TlsPem {
  cert: string;
  key: string;
}

const badConfig = (message: string) => new SvcError("bad_config", message);

function readPem(path: string, flagName: string, kind: RegExp): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw badConfig(`${flagName}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  if (!kind.test(text)) throw badConfig(`${flagName}: ${path} holds no PEM block of the kind expected (${kind.source.replaceAll("\\", "")})`);
  return text;
}

/**
 * The PEM files of --tls-cert and --tls-key, or null when neither is given. One without the
 * other is an error naming both: half a TLS setup must not fall back to plain text.
 */
export function loadTls(certPath: string, keyPath: string): TlsPem | null {
  if (certPath === "" && keyPath === "") return null;
  if (certPath === "" || keyPath === "") {
    throw badConfig(
      `--tls-cert and --tls-key go together: ${certPath === "" ? "--tls-key" : "--tls-cert"} was given without ${certPath === "" ? "--tls-cert" : "--tls-key"}`,
    );
  }
  return {
    cert: readPem(certPath, "--tls-cert", /-----BEGIN CERTIFICATE-----/),
    key: readPem(keyPath, "--tls-key", /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/),
  };
}

/**
 * The origins of --cors-origin, each an exact origin (`https://app.example.com`, a port if it is
 * not the scheme's own): what a browser sends in `Origin`, and what the broker echoes back.
 */
export function corsOrigins(values: readonly string[]): string[] {
  return values.map((value) => {
    if (value === "*")
      throw badConfig("--cors-origin: list the origins that may call the broker; '*' is not accepted (a listed origin is echoed back, never '*')");
    let origin: string;
    try {
      origin = new URL(value).origin;
    } catch {
      origin = "null";
    }
    if (origin === "null" || origin !== value) {
      throw badConfig(`--cors-origin: ${JSON.stringify(value)} is not an origin; write scheme://host[:port] with no path, e.g. https://app.example.com`);
    }
    return origin;
  });
}
