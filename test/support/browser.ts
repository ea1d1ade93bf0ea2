/**
 * Headless Chromium for end-to-end tests: Debian's chromium package (installed by ./svc), driven
 * through playwright-core, which brings no browser of its own.
 */
import { afterAll } from "bun:test";
import { type Browser, chromium } from "playwright-core";

export const chromiumPath = process.env.SVC_CHROMIUM ?? "/usr/bin/chromium";

/**
 * One browser for the test file, launched on first use and closed after all its tests. `args` adds
 * Chromium switches (e.g. a fake microphone); --no-sandbox because tests may run as root, where
 * Chromium's sandbox refuses to start.
 */
export function sharedBrowser(args: string[] = []): () => Promise<Browser> {
  let browser: Promise<Browser> | undefined;
  afterAll(async () => {
    if (browser !== undefined) await (await browser).close();
  });
  return () => (browser ??= chromium.launch({ executablePath: chromiumPath, headless: true, args: ["--no-sandbox", ...args] }));
}
