import type { Config } from "../config.ts";
import type { BrowserManager } from "../browser/lifecycle.ts";
import type { InstanceStore } from "../store/instance.ts";

/** What every tool handler can reach: configuration, the browser slot and the evidence store. */
export interface AppContext {
  readonly config: Config;
  readonly browsers: BrowserManager;
  readonly store: InstanceStore;
  readonly startedAt: Date;
  readonly version: string;
}
