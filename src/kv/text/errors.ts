/**
 * Redis's error replies, word for word: clients and their tests match on these strings. A command
 * throws a KvError to answer with one; the engine turns it into the error reply. Commands check
 * all their arguments before replying, so a throw never follows a partial reply.
 */
export class KvError extends Error {
  override name = "KvError";
}

export const wrongType = () => new KvError("WRONGTYPE Operation against a key holding the wrong kind of value");
export const syntaxError = () => new KvError("ERR syntax error");
export const notAnInteger = () => new KvError("ERR value is not an integer or out of range");
export const notAFloat = () => new KvError("ERR value is not a valid float");
export const noSuchKey = () => new KvError("ERR no such key");
export const indexOutOfRange = () => new KvError("ERR index out of range");
export const overflow = () => new KvError("ERR increment or decrement would overflow");
export const arityError = (name: string) => new KvError(`ERR wrong number of arguments for '${name}' command`);
/** A container command's subcommand with arguments it does not take (Redis's addReplySubcommandSyntaxError). */
export const subcommandSyntaxError = (container: string, sub: string) =>
  new KvError(`ERR unknown subcommand or wrong number of arguments for '${sub.slice(0, 128)}'. Try ${container} HELP.`);
export const mustBePositive = () => new KvError("ERR value is out of range, must be positive");
/** Past CONFIG maxmemory, to a command that may grow the data (the engine's check, a script's). */
export const overMaxmemory = () => new KvError("OOM command not allowed when used memory > 'maxmemory'.");
/** A write while min-replicas-to-write wants replicas svc does not have (Redis's shared.noreplicaserr). */
export const noReplicas = () => new KvError("NOREPLICAS Not enough good replicas to write.");
/** While the append-only file cannot be written, to a write (the engine's check, a script's). */
export const cannotPersist = (reason: string) => new KvError(`MISCONF Errors writing to the AOF file: ${reason}`);
/** SINTERCARD's and ZINTERCARD's answer to a LIMIT that is not a non-negative integer. */
export const negativeLimit = () => new KvError("ERR LIMIT can't be negative");
