/** `--bind host:port` (an IPv6 host in brackets: `[::1]:8080`); port 0 picks a free one. */
import { SvcError } from "./errors.ts";

export interface BindAddress {
  hostname: string;
  port: number;
}

export function parseBindAddress(text: string): BindAddress {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(text);
  const port = match ? Number(match[2]) : Number.NaN;
  if (!match || port > 65535) {
    throw new SvcError("bad_config", `--bind: expected host:port such as 127.0.0.1:8080 or [::1]:8080, got ${JSON.stringify(text)}`);
  }
  const host = match[1]!;
  return { hostname: host.startsWith("[") ? host.slice(1, -1) : host, port };
}

/** host:port as a person types it, brackets around an IPv6 host. */
export function formatBindAddress(hostname: string, port: number): string {
  return `${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`;
}
