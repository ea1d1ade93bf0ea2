/**
 * NativeRespParser: RespParser's interface and behaviour, with multibulk commands found by the
 * native scanner (respScan) in one call per read instead of byte by byte in JavaScript. The
 * scanner only says where each argument lies; the strings are still made here, straight from the
 * buffer, because only JavaScript can make them (RequestBuffer.argument: names interned, and an
 * argument the last command repeated reused, as RespParser does). Inline commands are rare (a
 * person typing into redis-cli or telnet) and are parsed here, as RespParser parses them.
 *
 * Its state is RespParser's: the unread bytes, and for a command cut off by the end of a read the
 * arguments read so far and the length of the bulk being awaited. So `pendingBytes` agrees byte
 * for byte, and a big command arriving in many reads is never scanned again from its start.
 */
import {
  respScan,
  respScanArrays,
  slotArgsLeft,
  slotArgsMax,
  slotBulkBytesMax,
  slotBulkLength,
  slotEnd,
  slotLineBytesMax,
  slotPos,
  slotWords,
  statusExpectedDollar,
  statusInvalidBulkLength,
  statusInvalidMultibulkLength,
  statusNeedMore,
  statusTooBigBulkCount,
  statusTooBigMbulkCount,
} from "../../native/resp-scan.ts";
import {
  ASTERISK,
  expectedDollar,
  inlineBytesMax,
  multibulkArgsMax,
  type ParseOutput,
  ProtocolError,
  protocolErrorMessage,
  RequestBuffer,
  type RequestParser,
} from "./parser.ts";

const { state, out } = respScanArrays;
state[slotLineBytesMax] = inlineBytesMax;
state[slotArgsMax] = multibulkArgsMax;

const scanErrors: Record<number, string> = {
  [statusTooBigMbulkCount]: "too big mbulk count string",
  [statusInvalidMultibulkLength]: "invalid multibulk length",
  [statusTooBigBulkCount]: "too big bulk count string",
  [statusInvalidBulkLength]: "invalid bulk length",
};

export class NativeRespParser extends RequestBuffer implements RequestParser {
  feed(chunk: Uint8Array): ParseOutput {
    this.append(chunk);
    const commands: string[][] = [];
    while (this.start < this.end) {
      if (this.argsLeft === 0 && this.buffer[this.start] !== ASTERISK) {
        let command: string[] | null | undefined;
        try {
          command = this.inline();
        } catch (error) {
          if (error instanceof ProtocolError) return { commands, error: error.message };
          throw error;
        }
        if (command === undefined) break;
        if (command !== null) commands.push(command);
        continue;
      }
      // Until the awaited bulk has wholly arrived there is nothing to scan.
      if (this.bulkLength >= 0 && this.end - this.start < this.bulkLength + 2) break;
      const status = this.scan(commands);
      if (status === statusNeedMore) break;
      if (status === statusExpectedDollar) {
        return { commands, error: protocolErrorMessage(expectedDollar(this.buffer[this.start]!)) };
      }
      const error = scanErrors[status];
      if (error !== undefined) return { commands, error: protocolErrorMessage(error) };
      // A full out array or an inline command: go round again.
    }
    return { commands, error: null };
  }

  /** One native scan from `start`; its commands are appended to `commands`. Returns its status. */
  private scan(commands: string[][]): number {
    state[slotBulkBytesMax] = this.bulkBytesMax;
    state[slotEnd] = this.end;
    state[slotPos] = this.start;
    state[slotArgsLeft] = this.argsLeft;
    state[slotBulkLength] = this.bulkLength;
    const status = respScan(this.buffer);
    this.start = state[slotPos]!;
    this.argsLeft = state[slotArgsLeft]!;
    this.bulkLength = state[slotBulkLength]!;
    const words = state[slotWords]!;
    let w = 0;
    while (w < words) {
      const count = out[w++]!;
      const recordEnd = w + 2 * count;
      // Every record but an unfinished command's last one completes a command.
      const complete = recordEnd < words || this.argsLeft === 0;
      if (complete && this.args.length === 0) {
        // The common case, a whole command in this read: its array made at its final size.
        const args: string[] = new Array(count);
        for (let i = 0; i < count; i++, w += 2) args[i] = this.argument(i, out[w]!, out[w + 1]!);
        commands.push(args);
        continue;
      }
      for (; w < recordEnd; w += 2) this.args.push(this.argument(this.args.length, out[w]!, out[w + 1]!));
      if (complete) {
        commands.push(this.args);
        this.args = [];
      }
    }
    return status;
  }
}
