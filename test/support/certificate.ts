/**
 * A self-signed certificate for 127.0.0.1 and localhost, made with openssl in `dir`: what the
 * TLS tests hand a server with --tls-cert and --tls-key, and trust on the client side.
 */
import { join } from "node:path";

export function makeCertificate(dir: string): { cert: string; key: string } {
  const cert = join(dir, "cert.pem");
  const key = join(dir, "key.pem");
  const made = Bun.spawnSync(
    [
      "openssl",
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-days",
      "1",
      "-keyout",
      key,
      "-out",
      cert,
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=IP:127.0.0.1,DNS:localhost",
    ],
    { stderr: "pipe" },
  );
  if (made.exitCode !== 0) throw new Error(`openssl failed: ${made.stderr.toString()}`);
  return { cert, key };
}
