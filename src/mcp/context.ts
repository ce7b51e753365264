import type { Config } from "../config.ts";
import type { BrowserManager } from "../browser/lifecycle.ts";
import type { InstanceStore } from "../store/instance.ts";
import type { Recorder } from "../capture/recorder.ts";
import type { TemporalState } from "../temporal/state.ts";
import type { ViewerSlot } from "../viewer/slot.ts";
import type { HumanQuestions } from "../viewer/questions.ts";
import type { CallAdmission } from "./admission.ts";

/** What every tool handler can reach: configuration, the browser slot and the evidence store. */
export interface AppContext {
  readonly config: Config;
  readonly browsers: BrowserManager;
  readonly store: InstanceStore;
  /** Continuous capture: the ingest worker and the index reader. */
  readonly recorder: Recorder;
  /** Range handles, artifact caches and the startup video qualification. */
  readonly temporal: TemporalState;
  /** The local evidence viewer, started on first use. */
  readonly viewer: ViewerSlot;
  /** Questions asked of a person (ask_human), answered in the viewer or through elicitation. */
  readonly humans: HumanQuestions;
  /** Admission of tool calls and their work in flight: shutdown closes it and cancels what runs. */
  readonly calls: CallAdmission;
  readonly startedAt: Date;
  readonly version: string;
}
