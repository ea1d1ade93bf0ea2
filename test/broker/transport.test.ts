// The broker's transport (spec: Transport) against a real `svc broker`: --tls-cert and --tls-key
// switch it to HTTPS — driven by curl and by fetch trusting the certificate the test made with
// openssl — and one without the other, or a file that is not PEM, stops it at start naming the
// flags; CORS headers go only to the origins --cors-origin lists, the origin echoed (never `*`),
// and a preflight is answered without a key.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeCertificate } from "../support/certificate.ts";
import { brokerAddress, spawnServer } from "../support/spawn.ts";
import { freshDataDir, startBroker } from "./support/broker.ts";

const cliPath = join(import.meta.dir, "../../src/cli.ts");
const dir = mkdtempSync(join(tmpdir(), "svc-tls-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function refused(flags: string[]): Promise<{ code: number; stderr: string }> {
  const proc = Bun.spawn([process.execPath, cliPath, "broker", "--bind", "127.0.0.1:0", "--data-dir", freshDataDir(), ...flags], {
    stdout: "pipe",
    stderr: "pipe",
  });
  const stderr = await new Response(proc.stderr).text();
  return { code: await proc.exited, stderr };
}

describe("TLS", () => {
  const { cert, key } = makeCertificate(dir);

  test("with a certificate and key the broker serves HTTPS to curl and to fetch, and not plain HTTP", async () => {
    const argv = [
      process.execPath,
      cliPath,
      "broker",
      "--bind",
      "127.0.0.1:0",
      "--data-dir",
      freshDataDir(),
      "--log-level",
      "warn",
      "--tls-cert",
      cert,
      "--tls-key",
      key,
    ];
    const server = await spawnServer("svc broker", argv, brokerAddress);
    try {
      expect(server.output()).toContain("HTTPS on");
      const url = `https://${server.where}`;
      const curl = Bun.spawnSync([
        "curl",
        "-sS",
        "--cacert",
        cert,
        "-X",
        "POST",
        "-H",
        "content-type: application/json",
        "-d",
        '{"name":"secure","partitions":1}',
        `${url}/topics`,
      ]);
      expect(curl.exitCode).toBe(0);
      expect(JSON.parse(curl.stdout.toString())).toMatchObject({ name: "secure", partitions: 1 });
      const listed = await fetch(`${url}/topics`, { tls: { ca: readFileSync(cert, "utf8") } });
      expect(await listed.json()).toEqual({ topics: [{ name: "secure", partitions: 1 }] });
      // Without trusting the certificate, a client refuses it: this is TLS, verified.
      const untrusted = Bun.spawnSync(["curl", "-sS", `${url}/healthz`], { stderr: "pipe" });
      expect(untrusted.exitCode).not.toBe(0);
      // Plain HTTP to the TLS port gets no HTTP answer.
      await expect(fetch(`http://${server.where}/healthz`).then((r) => r.status)).rejects.toThrow();
    } finally {
      await server.stop();
    }
  });

  test("one flag without the other, or a file that is not PEM, stops it at start naming the flags", async () => {
    const notPem = join(dir, "not.pem");
    writeFileSync(notPem, "hello\n");
    const badBase64 = join(dir, "bad-base64.pem");
    writeFileSync(badBase64, "-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n");
    const otherKey = join(dir, "other-key.pem");
    expect(Bun.spawnSync(["openssl", "genpkey", "-algorithm", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-out", otherKey]).exitCode).toBe(0);
    for (const [flags, message] of [
      [["--tls-cert", cert], /--tls-cert and --tls-key go together: --tls-cert was given without --tls-key/],
      [["--tls-key", key], /--tls-cert and --tls-key go together: --tls-key was given without --tls-cert/],
      [["--tls-cert", notPem, "--tls-key", key], /--tls-cert: .*not\.pem holds no PEM block/],
      [["--tls-cert", cert, "--tls-key", join(dir, "missing.pem")], /--tls-key: cannot read .*missing\.pem \(ENOENT\)/],
      [["--tls-cert", badBase64, "--tls-key", key], /--tls-cert and --tls-key could not be used: BAD_BASE64_DECODE/],
      [["--tls-cert", cert, "--tls-key", otherKey], /--tls-cert and --tls-key could not be used: KEY_VALUES_MISMATCH/],
    ] as const) {
      const { code, stderr } = await refused([...flags]);
      expect(code, flags.join(" ")).not.toBe(0);
      expect(stderr, flags.join(" ")).toMatch(message);
    }
  });
});

describe("CORS", () => {
  test("no CORS headers unless origins are listed", async () => {
    const broker = await startBroker();
    try {
      const answer = await fetch(`${broker.url}/topics`, { headers: { origin: "https://app.example.com" } });
      expect(answer.headers.get("access-control-allow-origin")).toBeNull();
      const preflight = await fetch(`${broker.url}/topics`, {
        method: "OPTIONS",
        headers: { origin: "https://app.example.com", "access-control-request-method": "POST" },
      });
      expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
    } finally {
      await broker.stop();
    }
  });

  test("a listed origin is echoed, an unlisted one is not, and a preflight needs no key", async () => {
    const broker = await startBroker(undefined, ["--auth", "required", "--cors-origin", "https://app.example.com", "--cors-origin", "http://localhost:3000"]);
    try {
      const preflight = await fetch(`${broker.url}/topics/orders/produce`, {
        method: "OPTIONS",
        headers: { origin: "http://localhost:3000", "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get("access-control-allow-origin")).toBe("http://localhost:3000");
      expect(preflight.headers.get("access-control-allow-methods")).toContain("POST");
      expect(preflight.headers.get("access-control-allow-headers")).toBe("authorization, content-type");
      // An ordinary request from a listed origin: refused for want of a key, but readable by the page.
      const listed = await fetch(`${broker.url}/topics`, { headers: { origin: "https://app.example.com" } });
      expect(listed.status).toBe(401);
      expect(listed.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
      expect(listed.headers.get("vary")).toContain("Origin");
      const unlisted = await fetch(`${broker.url}/topics`, { headers: { origin: "https://evil.example.com" } });
      expect(unlisted.headers.get("access-control-allow-origin")).toBeNull();
    } finally {
      await broker.stop();
    }
  });

  test("'*' or something that is not an origin is refused at start", async () => {
    for (const value of ["*", "app.example.com", "https://app.example.com/path"]) {
      const { code, stderr } = await refused(["--cors-origin", value]);
      expect(code, value).not.toBe(0);
      expect(stderr, value).toContain("--cors-origin");
    }
  });
});
