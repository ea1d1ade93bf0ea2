/**
 * A real PostgreSQL for tests, from Debian's package: initdb into a temporary directory and
 * `postgres` on a free loopback port, its socket in that directory too. initdb refuses to run as
 * root, so under uid 0 both run as the `postgres` user (setpriv), which is given the directory.
 * No bun:test here, so benchmarks can use it too.
 */
import { chownSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, spawnServer, type SpawnedServer } from "./spawn.ts";

export const postgresBinDir = "/usr/lib/postgresql/15/bin";
const superuser = "postgres";

export interface PostgresServer {
  port: number;
  /** A connection URL for database `name` (created by createDatabase, or "postgres"). */
  url(name?: string): string;
  /** Creates an empty database and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server and removes its directory. */
  stop(): Promise<void>;
}

const asRoot = () => process.getuid?.() === 0;

/**
 * argv run as the postgres user when we are root (initdb and postgres refuse root). setpriv
 * execs in place, so the process we signal is postgres itself; runuser would fork and sit between.
 */
function asPostgres(argv: string[]): string[] {
  return asRoot() ? ["setpriv", `--reuid=${superuser}`, `--regid=${superuser}`, "--init-groups", "--", ...argv] : argv;
}

async function run(argv: string[]): Promise<void> {
  const proc = Bun.spawn(argv, { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`${argv.join(" ")} exited ${code}:\n${out}${err}`);
}

export async function startPostgres(): Promise<PostgresServer> {
  const dir = mkdtempSync(join(tmpdir(), "svc-pg-"));
  const dataDir = join(dir, "data");
  if (asRoot()) {
    const { uid, gid } = await postgresIds();
    chownSync(dir, uid, gid);
  }
  await run(asPostgres([join(postgresBinDir, "initdb"), "-D", dataDir, "-U", superuser, "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"]));
  const port = freePort();
  // fsync off: a test database need not survive a machine crash, and syncing slows every commit.
  const server: SpawnedServer<true> = await spawnServer(
    "postgres",
    asPostgres([
      join(postgresBinDir, "postgres"),
      "-D",
      dataDir,
      "-p",
      String(port),
      "-k",
      dir,
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "fsync=off",
      "-c",
      "max_connections=200",
    ]),
    (output) => (output.includes("database system is ready to accept connections") ? true : undefined),
  );
  const url = (name = "postgres") => `postgres://${superuser}@127.0.0.1:${port}/${name}`;
  return {
    port,
    url,
    async createDatabase(name) {
      await run([
        join(postgresBinDir, "psql"),
        "-h",
        "127.0.0.1",
        "-p",
        String(port),
        "-U",
        superuser,
        "-d",
        "postgres",
        "-q",
        "-c",
        `CREATE DATABASE "${name}"`,
      ]);
      return url(name);
    },
    async stop() {
      // SIGINT is postgres's "fast" shutdown; SIGTERM's "smart" one would wait for every client.
      server.proc.kill("SIGINT");
      await server.proc.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresIds(): Promise<{ uid: number; gid: number }> {
  const text = await Bun.file("/etc/passwd").text();
  const line = text.split("\n").find((l) => l.startsWith(`${superuser}:`));
  if (line === undefined) throw new Error(`no ${superuser} user to run PostgreSQL as`);
  const [, , uid, gid] = line.split(":");
  return { uid: Number(uid), gid: Number(gid) };
}
