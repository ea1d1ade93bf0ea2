// An append-only file rewrite with Bloom filters in the data, against real `svc kv` processes:
// the rewrite writes each filter as BF.LOADCHUNK commands (header, then the chunks that are not
// all zero) and a restart on the rewritten file gives back the same filters — same BF.INFO,
// BF.DEBUG, BF.MEXISTS answers and dump bytes — with their times to live, including filters
// written to while the rewrite walks the keys.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type RespClient, type RespValue, withClient } from "../support/resp-client.ts";
import { startKv } from "../support/servers.ts";
import { tempDir } from "../../support/temp-dir.ts";

const aofName = "appendonly.aof";
const startKvIn = (dir: string) => startKv(["--dir", dir, "--appendonly", "yes", "--appendfsync", "everysec"]);
const range = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

/** Every Bloom filter's BF.INFO, BF.DEBUG, membership of `probe`, whole dump, and whether it has a TTL. */
async function filters(port: number, probe: readonly string[]): Promise<Record<string, unknown[]>> {
  return withClient(port, async (c) => {
    const out: Record<string, unknown[]> = {};
    for (const key of ((await c.call("KEYS", "*")) as string[]).sort()) {
      if (((await c.call("TYPE", key)) as { s: string }).s !== "MBbloom--") continue;
      const dump: RespValue[] = [];
      for (let iterator = "0"; ; ) {
        const reply = (await c.call("BF.SCANDUMP", key, iterator)) as [bigint, string];
        dump.push(reply);
        if (reply[0] === 0n) break;
        iterator = String(reply[0]);
      }
      const ttl = (await c.call("PTTL", key)) as bigint;
      out[key] = [await c.call("BF.INFO", key), await c.call("BF.DEBUG", key), await c.call("BF.MEXISTS", key, ...probe), dump, ttl > 0n];
    }
    return out;
  });
}

async function rewrite(c: RespClient, during: () => Promise<unknown>): Promise<void> {
  expect(await c.call("BGREWRITEAOF")).toEqual({ s: "Background append only file rewriting started" });
  await during();
  for (;;) {
    const info = (await c.call("INFO", "persistence")) as string;
    if (info.includes("aof_rewrite_in_progress:0")) break;
    await Bun.sleep(5);
  }
}

test("after BGREWRITEAOF and a restart, every Bloom filter answers as before", async () => {
  const dir = tempDir("svc-bloom-aof-");
  const probe = [...range(3000, "a"), ...range(3000, "n"), ...range(200, "late")];
  const kv = await startKvIn(dir);
  let before: Record<string, unknown[]>;
  try {
    before = await withClient(kv.port, async (c) => {
      await c.call("BF.RESERVE", "scaling", "0.001", "50", "EXPANSION", "3");
      await c.call("BF.MADD", "scaling", ...range(3000, "a"));
      await c.call("BF.RESERVE", "fixed", "0.01", "1000", "NONSCALING");
      await c.call("BF.MADD", "fixed", ...range(1000, "a"));
      await c.call("BF.MADD", "expiring", "x", "y");
      await c.call("PEXPIRE", "expiring", "600000");
      // 24 MB each, rewritten as 1 MiB chunks: for "big" those where its few items set bits,
      // for "bigEmpty" none (all zeros), the header alone.
      await c.call("BF.RESERVE", "big", "0.01", "20000000", "NONSCALING");
      await c.call("BF.MADD", "big", "a0", "a1", "a2");
      await c.call("BF.RESERVE", "bigEmpty", "0.01", "20000000");
      await c.call("SET", "plain", "v");
      // Writes while the walk runs: each goes after its key's dump, or the key after the write.
      await rewrite(c, () => c.pipeline(range(200, "late").map((item, i) => ["BF.ADD", ["scaling", "fixed", "big", "new"][i % 4]!, item])));
      return filters(kv.port, probe);
    });
    const file = readFileSync(join(dir, aofName), "latin1");
    expect(file).toContain("BF.LOADCHUNK");
    expect(file).not.toContain("BF.RESERVE");
    const loads = (key: string) => file.split(`BF.LOADCHUNK\r\n$${key.length}\r\n${key}\r\n`).length - 1;
    expect(loads("bigEmpty")).toBe(1);
    expect(loads("big")).toBeGreaterThan(1);
    expect(loads("big")).toBeLessThanOrEqual(1 + 24);
    expect(before.expiring![4]).toBe(true);
  } finally {
    await kv.stop();
  }
  const again = await startKvIn(dir);
  try {
    expect(await filters(again.port, probe)).toEqual(before);
    expect(await withClient(again.port, (c) => c.call("GET", "plain"))).toBe("v");
  } finally {
    await again.stop();
  }
}, 60_000);
