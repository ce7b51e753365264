/**
 * The marker a person's mark becomes: the annotate tool's own marker (same id rule, same table), with
 * author "human", so read_markers, storyboards and every marker_id anchor see it like any other.
 */
import { ToolError } from "../errors.ts";
import type { AppContext } from "../mcp/context.ts";
import { markerTools } from "../mcp/tools/markers.ts";
import type { MarkerMaker } from "./questions.ts";

const LABEL_LIMIT = 80;

export function humanMarkerMaker(app: AppContext): MarkerMaker {
  return async (question, markedTimeMs, choice) => {
    const annotate = markerTools.find((t) => t.name === "annotate");
    if (!annotate) throw new Error("the annotate tool is not built");
    const label = `human: ${choice}`.slice(0, LABEL_LIMIT);
    const out = await annotate.run({
      session_id: question.session_id,
      ...(question.page_id !== undefined ? { page_id: question.page_id } : {}),
      at_ms: markedTimeMs,
      label,
      author: "human",
    }, app);
    const marker = (out.structured.marker as { marker_id?: string } | undefined)?.marker_id;
    if (out.isError || !marker) {
      const error = out.structured.error as { code?: string; message?: string } | undefined;
      throw new ToolError({
        code: error?.code ?? "marker_failed",
        message: `The mark at ${markedTimeMs} ms could not become a marker: ${error?.message ?? out.text}`,
        retry: "never",
        recovery: "Mark a time inside the recorded session, or answer without a mark.",
      });
    }
    return marker;
  };
}
