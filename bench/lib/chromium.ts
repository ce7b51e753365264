/** The Chromium every benchmarked system launches, and the switches all of them get, so runs compare. */

export const CHROMIUM = Deno.env.get("KROMETRAIL_CHROME") ?? "/usr/bin/chromium";

export const CHROME_ARGS = [
  "--no-sandbox",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];
