/**
 * What the clients' connections hold in buffers, for INFO (clients, memory) and MEMORY STATS.
 */
import type { Server } from "../kit/server.ts";

/** What the connections hold: the largest query buffer and output now, and all their bytes together. */
export function clientBuffers(engine: Server): { maxInput: number; maxOutput: number; totalBytes: number } {
  const buffers = { maxInput: 0, maxOutput: 0, totalBytes: 0 };
  for (const s of engine.sessions.values()) {
    const mem = s.transport?.memory?.();
    if (mem === undefined) continue;
    buffers.maxInput = Math.max(buffers.maxInput, mem.queryBytes);
    buffers.maxOutput = Math.max(buffers.maxOutput, mem.outputBytes);
    buffers.totalBytes += mem.queryBytes + mem.outputBytes + mem.replyBufferBytes;
  }
  return buffers;
}
