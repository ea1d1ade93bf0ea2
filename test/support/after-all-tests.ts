/**
 * Preloaded by bun test (bunfig.toml): what runs once every test file has run. A process exit
 * handler would not do: bun test ends its process without running them.
 */
import { afterAll } from "bun:test";
import { removeTempDirs } from "./temp-dir.ts";

afterAll(removeTempDirs);
