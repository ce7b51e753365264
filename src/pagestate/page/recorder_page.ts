/**
 * Page-side entry of the DOM recorder, bundled with rrweb's `record` by `deno task build:bundles` into
 * src/pagestate/bundles_generated.ts. It runs in an isolated world of every document (see
 * src/pagestate/recorder.ts), so page scripts can neither see nor patch it.
 */
import { record } from "rrweb";

(globalThis as unknown as { __krometrailRrweb: { record: typeof record } }).__krometrailRrweb = { record };
