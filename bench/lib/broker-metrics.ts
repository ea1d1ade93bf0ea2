/**
 * The cost of GET /metrics, part of `svc bench broker` (issue: schema registry, metrics):
 *
 * - a scrape of a broker with 1,000 partitions, each written to and a group committed on each:
 *   the time one scrape takes, sequentially, the median and the slowest. Target < 20 ms.
 * - scraping during a produce load: wrk's produce rate alone and with a scrape every second (a
 *   fifteenth of Prometheus's default interval, so the effect is magnified), runs alternated,
 *   each run's rate printed beside the medians so the machine's own noise shows. Target: the
 *   rate changes by less than 2%.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { callBroker as call, startBenchBroker, wrkProduceScript } from "./broker-process.ts";
import { cpuSeconds } from "./process-cpu.ts";
import { fmt } from "./redis-benchmark.ts";
import { wrk } from "./wrk.ts";

const partitions = 1000;
const scrapes = 50;
const scrapeTargetMs = 20;
const scrapeEveryMs = 1000;
/** Alternating runs per side: the rate's run-to-run noise here is a few percent, the effect measured ~1%. */
const rounds = 3;
const loadChangeTarget = 0.02;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Prints both tables; answers whether both targets were met. */
export async function metricsCost(seconds: number): Promise<boolean> {
  const dir = mkdtempSync(join(tmpdir(), "svc-bench-metrics-"));
  const broker = await startBenchBroker(join(dir, "data"));
  try {
    await call(broker, "POST", "/topics", { name: "bench.wide", partitions });
    await call(broker, "POST", "/topics/bench.wide/produce", { records: Array.from({ length: partitions }, (_, p) => ({ value: "v", partition: p })) });
    for (let p = 0; p < partitions; p++) await call(broker, "POST", "/groups/bench/commit", { topic: "bench.wide", partition: p, offset: 1 });
    const times: number[] = [];
    let bytes = 0;
    const cpuBefore = cpuSeconds(broker.proc.pid);
    for (let i = 0; i < scrapes; i++) {
      const start = performance.now();
      bytes = (await call(broker, "GET", "/metrics")).length;
      times.push(performance.now() - start);
    }
    const cpuMsPerScrape = ((cpuSeconds(broker.proc.pid) - cpuBefore) * 1000) / scrapes;
    const slowest = Math.max(...times);
    console.log(`\n### broker: GET /metrics with ${fmt(partitions)} partitions, each written and committed by a group (${scrapes} scrapes, one at a time)\n`);
    console.log("| exposition bytes | median ms | slowest ms | broker CPU ms per scrape | target |");
    console.log("|---:|---:|---:|---:|---:|");
    console.log(`| ${fmt(bytes)} | ${median(times).toFixed(2)} | ${slowest.toFixed(2)} | ${cpuMsPerScrape.toFixed(2)} | < ${scrapeTargetMs} ms |`);
    const scrapeMet = median(times) < scrapeTargetMs;

    await call(broker, "POST", "/topics", { name: "bench.load", partitions: 1 });
    const rates: Record<"alone" | "scraped", number[]> = { alone: [], scraped: [] };
    const aloneCpuShares: number[] = [];
    for (let round = 0; round < rounds; round++) {
      for (const side of ["alone", "scraped"] as const) {
        let scraping = side === "scraped";
        const scraper = (async () => {
          while (scraping) {
            await call(broker, "GET", "/metrics");
            await Bun.sleep(scrapeEveryMs);
          }
        })();
        const cpuStart = cpuSeconds(broker.proc.pid);
        const result = await wrk({
          url: broker.url,
          script: wrkProduceScript("bench.load", 100, 100),
          scriptPath: join(dir, "produce.lua"),
          threads: 2,
          connections: 4,
          seconds,
          timeoutSeconds: 10,
        });
        if (side === "alone") aloneCpuShares.push((cpuSeconds(broker.proc.pid) - cpuStart) / seconds);
        scraping = false;
        await scraper;
        rates[side].push(result.requestsPerSec);
      }
    }
    const alone = median(rates.alone);
    const scraped = median(rates.scraped);
    const change = scraped / alone - 1;
    console.log(
      `\n### broker: produce (100 × 100 B, wrk -t 2 -c 4 -d ${seconds}s) alone and with a /metrics scrape every ${scrapeEveryMs} ms (${rounds} alternating runs each, medians)\n`,
    );
    const spread = (values: number[]) => (Math.max(...values) / Math.min(...values) - 1) * 100;
    console.log("| alone req/s (runs) | scraped req/s (runs) | alone median | scraped median | change | alone runs' spread | target |");
    console.log("|---|---|---:|---:|---:|---:|---:|");
    console.log(
      `| ${rates.alone.map(fmt).join(", ")} | ${rates.scraped.map(fmt).join(", ")} | ${fmt(alone)} | ${fmt(scraped)} | ` +
        `${(change * 100).toFixed(1)}% | ${spread(rates.alone).toFixed(1)}% | within ±${loadChangeTarget * 100}% |`,
    );
    // The steadier estimate: what the scrapes cost the broker's CPU against what the load costs it.
    const scrapeShare = cpuMsPerScrape / scrapeEveryMs / median(aloneCpuShares);
    console.log(
      `\nScrapes' CPU against the broker's CPU under the load alone: ${cpuMsPerScrape.toFixed(2)} ms per ${scrapeEveryMs} ms against ` +
        `${(median(aloneCpuShares) * 100).toFixed(0)}% of a core = ${(scrapeShare * 100).toFixed(2)}% (at Prometheus's default 15 s interval, a fifteenth of it).`,
    );
    const loadMet = Math.abs(change) < loadChangeTarget;
    console.log(
      `\n**Verdict:** a scrape of ${fmt(partitions)} partitions takes ${median(times).toFixed(1)} ms (target < ${scrapeTargetMs}): ${scrapeMet ? "met" : "NOT met"}; ` +
        `scraping moved the produce rate by ${(change * 100).toFixed(1)}% in this run (target < ${loadChangeTarget * 100}%): ${loadMet ? "met" : "NOT met"}` +
        `${loadMet ? "" : ` — runs without scraping spread ${spread(rates.alone).toFixed(1)}%`}; by CPU the scrapes cost ${(scrapeShare * 100).toFixed(2)}% of the load's.\n`,
    );
    return scrapeMet && loadMet;
  } finally {
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
