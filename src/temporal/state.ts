/** Process-lifetime temporal state: range handles, analysis/artifact caches and the video qualification. */
import type { FfmpegQualification } from "./ffmpeg.ts";
import { RangeHandles } from "./handles.ts";
import { TemporalCache } from "./prepare.ts";

export class TemporalState {
  readonly handles = new RangeHandles();
  readonly cache = new TemporalCache();

  constructor(readonly video: FfmpegQualification) {}

  forgetSession(sessionId: string): void {
    this.handles.invalidateSession(sessionId);
    this.cache.forgetSession(sessionId);
  }
}
