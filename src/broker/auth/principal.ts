/**
 * Who a request acts as, whichever front it came in by. With authentication off (the default:
 * the spec's `--auth` is off unless `required`) everyone is `anonymous`, whom every grant covers;
 * API keys add the key's holder (issue 36's keys).
 */
export type Principal = { kind: "anonymous" };

export const anonymous: Principal = { kind: "anonymous" };
