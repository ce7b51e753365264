import type { ActionEnv } from "../../control/interaction.ts";
import type { AppContext } from "../context.ts";

/** Routine actions stay pixel-light: images inline only when asked (spec: Current-State Observation). */
export function actionEnv(
  app: AppContext,
  args: { detail?: "concise" | "expanded" | "full"; inline_images?: boolean },
  inlineByDefault = false,
): ActionEnv {
  const session = app.browsers.require();
  const capture = app.recorder.captures.get(session.id);
  return {
    session,
    store: app.store,
    detail: args.detail ?? "concise",
    inlineImage: args.inline_images ?? inlineByDefault,
    persist: (row) => app.recorder.send({ type: "interaction", row }),
    frames: capture ? (pageId, request) => capture.postActionFrame(pageId, request) : undefined,
  };
}
