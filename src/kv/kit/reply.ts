/**
 * What command code answers with. Commands call these writers and never see bytes or sockets:
 * RESP clients get a RespReply that appends to the connection's output buffer, and the REST
 * `/cmd` endpoint a collector that builds JSON values (src/kv/rest). Strings are latin1 "byte
 * strings" (one char per byte), the engine's representation of binary-safe Redis strings.
 */
export interface Reply {
  /**
   * The protocol the client chose with HELLO. Most replies are written the same way for both and
   * the writer picks the encoding; only where RESP3 changes a reply's structure (score pairs in
   * ZRANGE WITHSCORES, field/value pairs in HRANDFIELD) does command code look at this.
   */
  protocol: 2 | 3;
  /** +OK style status. */
  simple(text: string): void;
  /**
   * -ERR style error; `message` includes its code word, e.g. "ERR syntax error". `counted`: the
   * server's error statistics already hold it (a script's reply passing on its command's error).
   */
  error(message: string, counted?: boolean): void;
  integer(n: number | bigint): void;
  /** A bulk string, or the null bulk for null. */
  bulk(value: string | null): void;
  /** A bulk string made of `bytes[from, to)`: a value read in place from the keyspace's table. */
  bulkBytes(bytes: Uint8Array, from: number, to: number): void;
  /** An array header; `null` is the null array (*-1). The next `length` replies are its items. */
  array(length: number | null): void;
  /** A map of `pairs` key/value pairs (RESP3 %); a flat array of 2 × pairs in RESP2. */
  map(pairs: number): void;
  /** An unordered collection (RESP3 ~); an array in RESP2. */
  set(count: number): void;
  /**
   * A double (RESP3 ,); a bulk string in RESP2. `text` is how it is written, `%.17g` unless the
   * command prints it its own way (GEO coordinates have 17 decimals).
   */
  double(n: number, text?: string): void;
  /** An out-of-band message such as a pub/sub delivery (RESP3 >); an array in RESP2. */
  push(count: number): void;
  /**
   * Human-readable text such as INFO (RESP3 verbatim, `format` its three-letter type, "txt"
   * unless given); a bulk string in RESP2.
   */
  verbatim(text: string, format?: string): void;
  /** A boolean (RESP3 #t, #f); the integer 1 or 0 in RESP2. Only scripts answer with one. */
  boolean(value: boolean): void;
  /** An integer of any size, as decimal digits (RESP3 big number); a bulk string in RESP2. Only scripts answer with one. */
  bigNumber(digits: string): void;
}
