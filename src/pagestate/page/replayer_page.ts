/**
 * Replay-target entry, bundled with rrweb's `Replayer` by `deno task build:bundles` into
 * src/pagestate/bundles_generated.ts. It runs in the private headless replay page (see
 * src/pagestate/replay.ts), never in a recorded page.
 */
import { Replayer } from "rrweb";

(globalThis as unknown as { __krometrailRrweb: { Replayer: typeof Replayer } }).__krometrailRrweb = {
  Replayer,
};
