// Byte budgets (src/broker/quotas/) and producer id ownership (src/broker/produce/producer-owners.ts)
// with a clock the test moves: a budget holds one second, refuses a produce it cannot hold and
// says how long to wait, lets a consume go into debt and refuses reads until it is paid; a key
// owns at most 10,000 producer ids, ids stay owned across a restart, and an id unused for 7
// days is forgotten — its owner here and its sequence state in the partition's journal.
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock } from "../../src/core/clock.ts";
import { producerIdleMs, producerIdsPerKeyMax } from "../../src/core/limits.ts";
import { SvcError } from "../../src/core/errors.ts";
import type { ApiKey } from "../../src/broker/auth/keys.ts";
import type { Actor } from "../../src/broker/auth/principal.ts";
import { ByteBudget } from "../../src/broker/quotas/byte-budget.ts";
import { Quotas } from "../../src/broker/quotas/quotas.ts";
import { ProducerOwners } from "../../src/broker/produce/producer-owners.ts";
import { ProducerJournal } from "../../src/broker/produce/producer-journal.ts";

const root = mkdtempSync(join(tmpdir(), "svc-owners-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const freshDir = () => join(root, `d${++dirs}`);

function refusal(fn: () => void): SvcError {
  try {
    fn();
  } catch (error) {
    if (error instanceof SvcError) return error;
    throw error;
  }
  throw new Error("not refused");
}

describe("a byte budget", () => {
  test("holds one second of its rate, refills continuously, and says how long a refused take must wait", () => {
    const clock = new ManualClock();
    const budget = new ByteBudget(1000, clock);
    expect(budget.tryTake(1000)).toBe(0);
    expect(budget.tryTake(1)).toBeCloseTo(1, 5);
    clock.advance(250);
    expect(budget.tryTake(500)).toBeCloseTo(250, 5);
    expect(budget.tryTake(250)).toBe(0);
    // Idle time beyond a second is not saved up.
    clock.advance(10_000);
    expect(budget.available()).toBe(1000);
  });

  test("a charge may go into debt, which is paid off by time", () => {
    const clock = new ManualClock();
    const budget = new ByteBudget(1000, clock);
    budget.charge(2700);
    expect(budget.debtMs()).toBeCloseTo(1700, 5);
    clock.advance(1699);
    expect(budget.debtMs()).toBeGreaterThan(0);
    clock.advance(1);
    expect(budget.debtMs()).toBe(0);
  });
});

describe("quotas", () => {
  const key = (produce: number | null, consume: number | null): ApiKey => ({
    key_id: "k1",
    name: "k",
    acls: [],
    produce_bytes_per_sec: produce,
    consume_bytes_per_sec: consume,
    created_at: "",
  });

  test("a produce at the whole budget passes, one byte more is a 413; then 429 with whole seconds, rounded up", () => {
    const clock = new ManualClock();
    const quotas = new Quotas(clock);
    const k = key(1000, null);
    expect(refusal(() => quotas.admitProduce(k, 1001)).status).toBe(413);
    quotas.admitProduce(k, 1000);
    const refused = refusal(() => quotas.admitProduce(k, 1));
    expect(refused.status).toBe(429);
    expect(refused.headers).toEqual({ "retry-after": "1" });
    clock.advance(1);
    quotas.admitProduce(k, 1);
  });

  test("a consume is refused while in debt, with Retry-After rounding the debt up to whole seconds", () => {
    const clock = new ManualClock();
    const quotas = new Quotas(clock);
    const k = key(null, 1000);
    quotas.checkConsume(k);
    quotas.chargeConsume(k, 3500);
    expect(refusal(() => quotas.checkConsume(k)).headers).toEqual({ "retry-after": "3" });
    clock.advance(2500);
    quotas.checkConsume(k);
  });

  test("a key without rates is never limited", () => {
    const quotas = new Quotas(new ManualClock());
    const k = key(null, null);
    quotas.admitProduce(k, 1e12);
    quotas.chargeConsume(k, 1e12);
    quotas.checkConsume(k);
  });
});

describe("producer id ownership", () => {
  const alice: Actor = { key: "alice", actsForAnyKey: false };
  const bob: Actor = { key: "bob", actsForAnyKey: false };
  const root: Actor = { key: "root", actsForAnyKey: true };

  test("the first key to use an id owns it, across a restart; another key is refused, a global admin is not", async () => {
    const dir = freshDir();
    const clock = new ManualClock();
    const owners = new ProducerOwners(mkdir(dir), clock);
    owners.check("p", alice);
    await owners.use("p", alice);
    const reopened = new ProducerOwners(dir, clock);
    expect(refusal(() => reopened.check("p", bob)).status).toBe(403);
    reopened.check("p", root);
    reopened.check("p", alice);
  });

  test("a key owns at most 10,000 ids: the 10,000th is taken, the next refused until one is forgotten", async () => {
    const clock = new ManualClock();
    const dir = mkdir(freshDir());
    const owners = new ProducerOwners(dir, clock);
    // Claimed at once, as many producers starting together would: their lines share writes.
    await Promise.all(Array.from({ length: producerIdsPerKeyMax - 1 }, (_, i) => owners.use(`old-${i}`, alice)));
    clock.advance(producerIdleMs / 2);
    owners.check("last", alice);
    await owners.use("last", alice);
    // The journal alone (no snapshot written yet) brings them all back.
    expect(new ProducerOwners(dir, clock).ownedBy("alice")).toBe(producerIdsPerKeyMax);
    expect(owners.ownedBy("alice")).toBe(producerIdsPerKeyMax);
    expect(refusal(() => owners.check("one-more", alice)).message).toContain(`${producerIdsPerKeyMax} producer ids`);
    owners.check("one-more", bob);
    // The old ones go idle first: a week after their last use they are forgotten.
    clock.advance(producerIdleMs / 2);
    expect(owners.forgetIdle()).toHaveLength(producerIdsPerKeyMax - 1);
    expect(owners.ownedBy("alice")).toBe(1);
    owners.check("one-more", alice);
  });

  test("a torn last journal line (a crash mid-write) is cut off; the next claim is read back whole", async () => {
    const clock = new ManualClock();
    const dir = mkdir(freshDir());
    await new ProducerOwners(dir, clock).use("a", alice);
    appendFileSync(join(dir, "producers.journal"), '{"p":"b","k":"al');
    const reopened = new ProducerOwners(dir, clock);
    await reopened.use("c", bob);
    const again = new ProducerOwners(dir, clock);
    expect([again.ownedBy("alice"), again.ownedBy("bob")]).toEqual([1, 1]);
  });

  test("a use keeps an id alive; an idle one is forgotten, for good once written, and another key may take it", async () => {
    const clock = new ManualClock();
    const dir = mkdir(freshDir());
    const owners = new ProducerOwners(dir, clock);
    await owners.use("kept", alice);
    await owners.use("idle", alice);
    clock.advance(producerIdleMs - 1);
    await owners.use("kept", alice);
    expect(owners.forgetIdle()).toEqual([]);
    clock.advance(1);
    expect(owners.forgetIdle()).toEqual(["idle"]);
    owners.check("idle", bob);
    expect(refusal(() => owners.check("kept", bob)).status).toBe(403);
    await owners.flush();
    const reopened = new ProducerOwners(dir, clock);
    reopened.check("idle", bob);
    expect(refusal(() => reopened.check("kept", bob)).status).toBe(403);
  });
});

describe("forgetting a producer's sequence state", () => {
  test("the journal's forget line drops it now and again when the partition is reopened", async () => {
    const dir = mkdir(freshDir());
    const journal = ProducerJournal.open(dir, 0);
    await journal.beforeWrite([{ tag: { producerId: "p", firstSequence: 0 }, baseOffset: 0, count: 3 }]);
    journal.afterWrite([{ tag: { producerId: "p", firstSequence: 0 }, baseOffset: 0, count: 3 }]);
    expect(journal.window("p").next).toBe(3);
    await journal.forget("p");
    expect(journal.window("p").next).toBe(0);
    expect(ProducerJournal.open(dir, 3).window("p").next).toBe(0);
  });
});

function mkdir(dir: string): string {
  mkdirSync(dir, { recursive: true });
  return dir;
}
