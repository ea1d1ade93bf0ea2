/**
 * Every request to a mediasoup worker goes through here: an answer later than
 * mediaEngineAnswerTimeoutMs (the spec's 5 s), or a worker that died under the call, is a 503
 * "media engine" error rather than a hung request. When a call carries parameters taken from the
 * client's offer, mediasoup's refusal of them (UnsupportedError, TypeError) is the offer's fault
 * and answered 400; from any other call the same errors are our bug and stay a 500 with a log id.
 */
import { errors } from "mediasoup";
import { SvcError } from "../core/errors.ts";
import { mediaEngineAnswerTimeoutMs } from "../core/limits.ts";

export interface EngineCallOptions<T> {
  /** The call carries values from the client's offer (payload types, fingerprints, SSRCs). */
  fromOffer?: boolean;
  /**
   * Disposes of an answer that arrives after the deadline (a router created by a worker that was
   * only slow), so a late success leaves nothing orphaned in the worker.
   */
  discard?: (late: T) => void;
}

export async function engineCall<T>(what: string, call: () => Promise<T>, options: EngineCallOptions<T> = {}): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new SvcError("unavailable", `media engine did not answer within ${mediaEngineAnswerTimeoutMs / 1000} s (${what})`)),
      mediaEngineAnswerTimeoutMs,
    );
  });
  const answer = call();
  try {
    return await Promise.race([answer, late]);
  } catch (error) {
    if (options.discard !== undefined) answer.then(options.discard, () => {});
    throw classify(error, what, options.fromOffer === true);
  } finally {
    clearTimeout(timer);
  }
}

function classify(error: unknown, what: string, fromOffer: boolean): unknown {
  if (error instanceof SvcError) return error;
  if (fromOffer && (error instanceof errors.UnsupportedError || error instanceof TypeError)) {
    return new SvcError("bad_request", `sdp_offer could not be accepted (${what}): ${(error as Error).message}`, { cause: error });
  }
  if (error instanceof errors.WorkerClosedError || (error instanceof Error && /closed|died/i.test(error.message))) {
    return new SvcError("unavailable", `media engine is down (${what}): ${error.message}`, { cause: error });
  }
  return error;
}
