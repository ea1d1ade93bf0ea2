// Two ./svc commands started at once on one checkout and one cache (`./svc up` in one terminal,
// `./svc test` in another, right after a pull) both get through set-up and leave a working build.
// The bootstrap used to fail here: both copied a cached build into one shared `dist.tmp`, and the
// first one's rename took that directory from under the second ("cannot create
// …/media-worker/dist.tmp/.inputs-hash: Directory nonexistent"), and both built wasm/ into one
// shared `<hash>.tmp` in the cache. ./svc now locks each step and re-checks it once it holds the
// lock (docs/foundation.md).
import { afterAll, describe, expect, test } from "bun:test";
import {
  chmodSync,
  cpSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { cacheDir } from "../../src/cli/paths.ts";

const repo = join(import.meta.dir, "../..");
const scratch = mkdtempSync(join(tmpdir(), "svc-concurrent-setup-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The build kinds ./svc installs into <kind>/dist from $SVC_CACHE_DIR/<kind>/<hash>. */
const kinds = ["native", "wasm", "media-worker"] as const;

async function run(cmd: string[], options: { cwd?: string; env?: Record<string, string> } = {}) {
  const proc = Bun.spawn(cmd, { cwd: options.cwd ?? repo, env: { ...process.env, ...options.env }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

/**
 * A checkout of what ./svc's set-up reads (the script, the npm manifests, native/, wasm/,
 * media-worker/), sharing this checkout's node_modules, so the test can delete its builds without
 * touching the ones other tests use. Untracked files are copied too: they are part of the inputs'
 * hashes, and with them the copy's builds are the ones this checkout's ./svc put in the cache.
 */
async function setupCheckout(dir: string): Promise<string> {
  const { stdout } = await run([
    "git",
    "ls-files",
    "-z",
    "--cached",
    "--others",
    "--exclude-standard",
    "--",
    "svc",
    "package.json",
    "package-lock.json",
    ...kinds,
  ]);
  for (const file of new Set(stdout.split("\0").filter((f) => f !== "" && existsSync(join(repo, f))))) {
    mkdirSync(join(dir, dirname(file)), { recursive: true });
    cpSync(join(repo, file), join(dir, file));
  }
  symlinkSync(join(repo, "node_modules"), join(dir, "node_modules"));
  // The CLI ./svc hands over to, replaced by one that uses what set-up left (loads the addon,
  // compiles every wasm module, finds the worker executable) and nothing else, so this test is
  // about set-up alone.
  mkdirSync(join(dir, "src"));
  writeFileSync(
    join(dir, "src/cli.ts"),
    `import { accessSync, constants, readdirSync, readFileSync } from "node:fs";
const root = new URL("..", import.meta.url).pathname;
const addon = require(root + "native/dist/svc_native.node");
if (addon.crc32c(Buffer.from("123456789"), 0, 9, 0) !== 0xe3069283) throw new Error("native addon: wrong crc32c");
const modules = readdirSync(root + "wasm/dist").filter((f) => f.endsWith(".wasm"));
for (const f of modules) new WebAssembly.Module(readFileSync(root + "wasm/dist/" + f));
if (process.env.MEDIASOUP_WORKER_BIN !== root + "media-worker/dist/mediasoup-worker") throw new Error("MEDIASOUP_WORKER_BIN not exported");
accessSync(process.env.MEDIASOUP_WORKER_BIN, constants.X_OK);
console.log("set-up works: native addon, " + modules.length + " wasm modules, mediasoup worker");
`,
  );
  return dir;
}

/** A copy of directory FROM at TO made of hard links (cached builds are only ever read). */
function linkDir(from: string, to: string) {
  mkdirSync(to, { recursive: true });
  for (const name of readdirSync(from)) linkSync(join(from, name), join(to, name));
}

describe("./svc started twice at once", () => {
  /**
   * Normally about 30 s on a 2-core machine (the wasm build is most of it). Only a cache that lacks
   * this checkout's native or media-worker build makes step 1 longer: it builds them.
   */
  const setupTimeoutMs = 600_000;

  test(
    "both set up, one builds and installs while the other waits, and they leave a working build",
    async () => {
      const checkout = await setupCheckout(join(scratch, "checkout"));

      // 1. One run against the machine's cache, which normally holds this checkout's native and
      //    media-worker builds already (then it only installs them); its stamps name those builds.
      const first = await run(["./svc"], { cwd: checkout });
      expect(first).toMatchObject({ code: 0 });
      const hashes = Object.fromEntries(kinds.map((kind) => [kind, readFileSync(join(checkout, kind, "dist/.inputs-hash"), "utf8").trim()]));

      // 2. A cache of the test's own holding those native and media-worker builds (a cold
      //    media-worker build takes minutes) but no wasm build (asc takes seconds), and a checkout
      //    with nothing installed: both runs must build wasm and install all three at once.
      const cache = join(scratch, "cache");
      for (const kind of ["native", "media-worker"] as const) linkDir(join(cacheDir, kind, hashes[kind]!), join(cache, kind, hashes[kind]!));
      for (const kind of kinds) rmSync(join(checkout, kind, "dist"), { recursive: true, force: true });

      // 3. A cp that waits a second before copying: each install's copy then lasts long enough
      //    that two started together overlap for sure (the old script failed there only when
      //    timing happened to line up), and it changes nothing else ./svc does.
      const bin = join(scratch, "bin");
      mkdirSync(bin);
      writeFileSync(join(bin, "cp"), `#!/bin/sh\nsleep 1\nexec ${Bun.which("cp")} "$@"\n`);
      chmodSync(join(bin, "cp"), 0o755);
      const env = { SVC_CACHE_DIR: cache, PATH: `${bin}:${process.env.PATH}` };
      const runs = await Promise.all([run(["./svc"], { cwd: checkout, env }), run(["./svc"], { cwd: checkout, env })]);

      // (An object, so that a failure shows the run's stderr.)
      for (const r of runs) expect(r).toMatchObject({ code: 0, stdout: expect.stringContaining("set-up works: native addon, ") });
      const stderr = runs.map((r) => r.stderr).join("");
      // One built wasm/, the other waited for it and took its build instead of building again.
      expect(stderr.match(/\[svc\] wasm build \(asc\) done/g)).toHaveLength(1);
      expect(stderr).toContain("[svc] waiting for another ./svc that is working on ");

      // Each dist/ is the cached build, whole, with the stamp of the first run (same inputs).
      for (const kind of kinds) {
        const dist = join(checkout, kind, "dist");
        const entry = join(cache, kind, hashes[kind]!);
        const built = readdirSync(entry)
          .filter((f) => !f.startsWith("."))
          .sort();
        expect(readdirSync(dist).sort()).toEqual([".inputs-hash", ...built].sort());
        expect(readFileSync(join(dist, ".inputs-hash"), "utf8").trim()).toBe(hashes[kind]!);
        for (const f of built) expect(readFileSync(join(dist, f)).equals(readFileSync(join(entry, f)))).toBe(true);
      }
      expect(statSync(join(checkout, "media-worker/dist/mediasoup-worker")).mode & 0o111).not.toBe(0);
      // Nothing half-done left behind: the checkout's .svc/ holds only locks, the cache's wasm/
      // its lock and the one build.
      expect(readdirSync(join(checkout, ".svc")).filter((f) => !f.endsWith(".lock"))).toEqual([]);
      expect(readdirSync(join(cache, "wasm")).sort()).toEqual([".lock", hashes.wasm!]);

      // And a third run finds everything current: no set-up step, straight to the CLI.
      const third = await run(["./svc"], { cwd: checkout, env });
      expect(third).toMatchObject({ code: 0, stderr: expect.not.stringContaining("[svc]") });
    },
    setupTimeoutMs,
  );
});
