/**
 * Loads a wasm module compiled from wasm/<name>.ts by the ./svc bootstrap into wasm/dist/.
 * Modules are built with AssemblyScript's stub runtime: they allocate nothing themselves, the
 * TypeScript side owns linear memory above the module's input offset.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

export const wasmDistDir = join(import.meta.dir, "../../wasm/dist");

/** AssemblyScript calls env.abort on a failed assertion; we build with --noAssert, so it is a bug. */
function abort(messagePtr: number, filePtr: number, line: number, column: number): never {
  throw new Error(`wasm abort at ${line}:${column} (message @${messagePtr}, file @${filePtr})`);
}

export function loadWasm(name: string): WebAssembly.Instance {
  const path = join(wasmDistDir, `${name}.wasm`);
  if (!existsSync(path)) throw new Error(`wasm module missing at ${path}: run ./svc once, it builds wasm/`);
  return new WebAssembly.Instance(new WebAssembly.Module(readFileSync(path)), { env: { abort } });
}

const wasmPageBytes = 64 * 1024;

/** Grows `memory` so that `bytes` bytes from offset 0 are addressable. */
export function ensureMemory(memory: WebAssembly.Memory, bytes: number): void {
  const missing = bytes - memory.buffer.byteLength;
  if (missing > 0) memory.grow(Math.ceil(missing / wasmPageBytes));
}
