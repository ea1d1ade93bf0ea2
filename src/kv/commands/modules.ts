/**
 * MODULE, as a Redis 7.0 server with no module loaded answers it: svc loads no modules (its Bloom
 * filter commands are built in, though COMMAND LIST FILTERBY MODULE names them as RedisBloom's
 * `bf`), so LIST is empty, LOAD and LOADEX fail as a library that cannot be loaded fails, and
 * UNLOAD finds nothing to unload. LOAD, LOADEX and UNLOAD are protected: enable-module-command
 * (no, local, yes; fixed at start) refuses them first, as Redis's processCommand does (engine.ts).
 */
import { helpReply } from "../kit/help.ts";
import { type CommandFlag, type CommandSpec, helpFlags, subcommandsOf } from "../kit/spec.ts";
import { KvError } from "../text/errors.ts";

/** Redis 7.0's flags for the subcommands that load and unload. */
const loadingFlags: readonly CommandFlag[] = ["admin", "noscript", "no_async_loading"];

/** LOAD's and LOADEX's answer: no module can be loaded. */
const refuseLoad = (): never => {
  throw new KvError("ERR Error loading the extension. Please check the server logs.");
};

const sub = subcommandsOf("module");
/** A subcommand that loads or unloads, which enable-module-command guards. */
const guarded: typeof sub = (...args) => ({ ...sub(...args), protectedBy: "enable-module-command" });

export const moduleCommands: readonly CommandSpec[] = [
  {
    name: "module",
    arity: -2,
    flags: [],
    group: "server",
    summary: "Loadable modules: svc loads none.",
    subcommands: [
      sub("list", 2, "Lists the loaded modules: none.", (x) => x.reply.array(0), ["admin", "noscript"]),
      guarded("load", -3, "Would load a module; svc loads none.", refuseLoad, loadingFlags),
      guarded("loadex", -3, "Would load a module with configurations; svc loads none.", refuseLoad, loadingFlags),
      guarded(
        "unload",
        3,
        "Would unload a module; none is loaded.",
        () => {
          throw new KvError("ERR Error unloading module: no such module with that name");
        },
        loadingFlags,
      ),
      sub(
        "help",
        2,
        "Shows MODULE's subcommands.",
        (x) =>
          helpReply(x, "MODULE", [
            "LIST",
            "    Return a list of loaded modules.",
            "LOAD <path> [<arg> ...]",
            "    Load a module library from <path>, passing to it any optional arguments.",
            "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
            "    Load a module library from <path>, while passing it module configurations and optional arguments.",
            "UNLOAD <name>",
            "    Unload a module.",
          ]),
        helpFlags,
      ),
    ],
  },
];
