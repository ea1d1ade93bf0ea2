/**
 * LATENCY: the latency monitor's events (latency-monitor.ts), as Redis 7.0 answers them — LATEST,
 * HISTORY, RESET — and its reports for people (latency-report.ts): GRAPH and DOCTOR; and
 * HISTOGRAM, each command's call times (latency-histogram.ts), kept while latency-tracking is on.
 */
import { latencyDoctor, latencyGraph } from "../observe/latency-report.ts";
import { KvError } from "../text/errors.ts";
import { helpReply } from "../kit/help.ts";
import type { LatencyHistogram } from "../observe/latency-histogram.ts";
import { type CommandSpec, commandOrSubcommand, type Exec, helpFlags, subcommandsOf } from "../kit/spec.ts";

/** Every LATENCY subcommand but HELP is administrative, as in Redis. */
const sub = subcommandsOf("latency");

const nowSeconds = (x: Exec) => Math.floor(x.engine.clock.nowMs() / 1000);

/** LATEST: per event, [name, time of its last sample, that sample's ms, its worst ms]. */
function latest(x: Exec): void {
  const { events } = x.engine.latency;
  x.reply.array(events.size);
  for (const [event, series] of events) {
    x.reply.array(4);
    x.reply.bulk(event);
    x.reply.integer(series.latest.unixSeconds);
    x.reply.integer(series.latest.ms);
    x.reply.integer(series.maxMs);
  }
}

/** HISTORY event: its samples, oldest first, each [time, ms]; none for an event never seen. */
function history(x: Exec, argv: string[]): void {
  const samples = x.engine.latency.events.get(argv[2]!)?.samples ?? [];
  x.reply.array(samples.length);
  for (const sample of samples) {
    x.reply.array(2);
    x.reply.integer(sample.unixSeconds);
    x.reply.integer(sample.ms);
  }
}

/** A command's histogram as HISTOGRAM replies it: {calls, histogram_usec: {label µs: calls at or below}}. */
function replyHistogram(x: Exec, name: string, histogram: LatencyHistogram): void {
  x.reply.bulk(name);
  x.reply.map(2);
  x.reply.bulk("calls");
  x.reply.integer(histogram.calls);
  x.reply.bulk("histogram_usec");
  const levels = histogram.cumulative();
  x.reply.map(levels.length);
  for (const [micros, calls] of levels) {
    x.reply.integer(micros);
    x.reply.integer(calls);
  }
}

/**
 * HISTOGRAM [command ...]: every command with call times, or the named ones — a container naming
 * its subcommands too, an unknown name skipped, a name given twice answered twice, as in Redis.
 */
function histogram(x: Exec, argv: string[]): void {
  const stats = x.engine.stats.commands;
  const found: [string, LatencyHistogram][] = [];
  const add = (name: string) => {
    const latency = stats.get(name)?.latency;
    if (latency != null) found.push([name, latency]);
  };
  if (argv.length === 2) for (const name of stats.keys()) add(name);
  for (const name of argv.slice(2)) {
    const spec = commandOrSubcommand(x.engine.commands, name);
    if (spec === undefined) continue;
    add(spec.name);
    for (const sub of spec.subcommands ?? []) add(sub.name);
  }
  x.reply.map(found.length);
  for (const [name, latency] of found) replyHistogram(x, name, latency);
}

function graph(x: Exec, argv: string[]): void {
  const event = argv[2]!;
  const series = x.engine.latency.events.get(event);
  if (series === undefined) throw new KvError(`ERR No samples available for event '${event}'`);
  x.reply.verbatim(latencyGraph(event, series, nowSeconds(x)));
}

export const latencyCommands: readonly CommandSpec[] = [
  {
    name: "latency",
    arity: -2,
    flags: [],
    group: "server",
    summary: "The latency monitor (LATEST, HISTORY, RESET, GRAPH, DOCTOR) and each command's call times (HISTOGRAM).",
    subcommands: [
      sub("latest", 2, "Returns each event's latest and worst latency.", latest),
      sub("history", 3, "Returns an event's samples.", history),
      sub("reset", -2, "Forgets the named events' samples, or every event's.", (x, argv) => x.reply.integer(x.engine.latency.reset(argv.slice(2)))),
      sub("graph", 3, "Draws an event's samples.", graph),
      sub("doctor", 2, "Reports the events seen and their usual causes.", (x) => x.reply.verbatim(latencyDoctor(x.engine.latency))),
      sub("histogram", -2, "Returns commands' call times as cumulative histograms.", histogram),
      sub(
        "help",
        2,
        "Shows LATENCY's subcommands.",
        (x) =>
          helpReply(x, "LATENCY", [
            "DOCTOR",
            "    Return a report of the latency events seen and what usually causes them.",
            "GRAPH <event>",
            "    Return a graph of <event>'s latency samples.",
            "HISTOGRAM [<command> ...]",
            "    Return each command's calls and their times as a cumulative histogram (µs: calls at or",
            "    below), for the named commands (a container's subcommands too) or all those called.",
            "HISTORY <event>",
            "    Return <event>'s samples, oldest first, as [unix time, latency in ms] pairs.",
            "LATEST",
            "    Return each event's name, the time and latency of its latest sample, and its worst latency.",
            "RESET [<event> ...]",
            "    Forget the samples of the named events, or of every event.",
          ]),
        helpFlags,
      ),
    ],
  },
];
