/**
 * Starts bench/lib/media-forwarder.ts as its own process and speaks its line protocol (READY,
 * stats, quit). Its CPU — the Bun process and the mediasoup workers it reports — is the
 * forwarding side's in bench/media.ts.
 */
import type { Subprocess } from "bun";
import { join } from "node:path";
import type { ForwarderConfig, ForwarderReady, ForwarderStats } from "./media-forwarder.ts";
import { cpuSeconds } from "./process-cpu.ts";

const forwarderPath = join(import.meta.dir, "media-forwarder.ts");
/** A bound on building 50 sessions on a loaded machine, not a timing claim. */
const readyTimeoutMs = 60_000;
/** How long a forwarder may take to close its sessions and workers after `quit`. */
const stopMs = 5000;

export class ForwarderProcess {
  #lines: string[] = [];
  #waiters: ((line: string) => void)[] = [];
  #stderr = "";

  private constructor(
    readonly proc: Subprocess<"pipe", "pipe", "pipe">,
    public ready: ForwarderReady = { pids: [], participants: [] },
  ) {}

  static async start(config: ForwarderConfig): Promise<ForwarderProcess> {
    const proc = Bun.spawn([process.execPath, forwarderPath, JSON.stringify(config)], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    const forwarder = new ForwarderProcess(proc);
    void forwarder.#pump();
    void (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of proc.stderr) forwarder.#stderr += decoder.decode(chunk, { stream: true });
    })();
    const line = await forwarder.#next("READY", readyTimeoutMs);
    forwarder.ready = JSON.parse(line) as ForwarderReady;
    return forwarder;
  }

  /** CPU seconds of the forwarding side so far: its Bun process, and its workers together. */
  cpuSeconds(): { bun: number; workers: number } {
    const [bun, ...workers] = this.ready.pids;
    return { bun: cpuSeconds(bun!), workers: workers.reduce((sum, pid) => sum + cpuSeconds(pid), 0) };
  }

  async stats(): Promise<ForwarderStats> {
    this.proc.stdin.write("stats\n");
    this.proc.stdin.flush();
    return JSON.parse(await this.#next("STATS", readyTimeoutMs)) as ForwarderStats;
  }

  async stop(): Promise<void> {
    this.proc.stdin.write("quit\n");
    this.proc.stdin.flush();
    this.proc.stdin.end();
    // A forwarder that does not close within stopMs is killed; its workers exit with their channel.
    const timer = setTimeout(() => this.proc.kill("SIGKILL"), stopMs);
    await this.proc.exited;
    clearTimeout(timer);
  }

  async #pump(): Promise<void> {
    const decoder = new TextDecoder();
    let buffered = "";
    for await (const chunk of this.proc.stdout) {
      buffered += decoder.decode(chunk, { stream: true });
      let newline: number;
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        const waiter = this.#waiters.shift();
        if (waiter !== undefined) waiter(line);
        else this.#lines.push(line);
      }
    }
  }

  /** The next stdout line, which must start with `tag`; its rest. */
  async #next(tag: string, timeoutMs: number): Promise<string> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const line =
      this.#lines.shift() ??
      (await Promise.race([
        new Promise<string>((resolve) => this.#waiters.push(resolve)),
        this.proc.exited.then((code) => Promise.reject(new Error(`media forwarder exited ${code}:\n${this.#stderr}`))),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`media forwarder gave no ${tag} within ${timeoutMs} ms:\n${this.#stderr}`)), timeoutMs);
        }),
      ]).finally(() => clearTimeout(timer)));
    if (!line.startsWith(`${tag} `)) throw new Error(`media forwarder: expected ${tag}, got ${line}\n${this.#stderr}`);
    return line.slice(tag.length + 1);
  }
}
