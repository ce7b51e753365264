import { z } from "zod";
import { cdpMessage } from "../../browser/cdp.ts";
import { rendezvous } from "../../control/observation.ts";
import { postActionImage, type Shot } from "../../control/post_action_image.ts";
import { observeSnapshot } from "../../snapshot/acquire.ts";
import { presentSnapshot } from "../../snapshot/present.ts";
import { defineTool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import { leanObservation, output } from "../response.ts";
import { detail, inlineImages, pageId } from "../schemas.ts";

/** Inline images above this size go by resource reference only (as take_screenshot). */
const INLINE_IMAGE_LIMIT = 1_500_000;

/**
 * observe_live: what an action's observation shows (control/observation.ts), taken on request with no
 * action and no interaction record, so calling it never adds to the session's interaction history.
 */
export const observeTools = [
  defineTool({
    name: "observe_live",
    capability: "control",
    output: OUTPUT_SCHEMAS.observe_live,
    description: "The page now, without acting: screenshot, target index, URL, title and dialog state.",
    input: z.strictObject({
      page_id: pageId.optional(),
      detail: detail.optional(),
      inline_images: inlineImages.optional(),
    }),
    annotations: { readOnlyHint: true },
    handler: async (args, app) => {
      const session = app.browsers.require();
      const page = session.page(args.page_id);
      const level = args.detail ?? "concise";
      const warnings: string[] = [];
      // While capture runs the image is a JPEG at the stream's quality, like an action's observation.
      const jpeg = app.recorder.captures.has(session.id);
      let shot: Promise<Shot> | undefined;
      let hidden = false;
      let observed = false;
      if (!page.dialog && !page.closed) {
        // Two animation frames first, so the picture is one the compositor drew after this request.
        let met = await rendezvous(page, () => {
          shot = postActionImage(page, jpeg);
          shot.catch(() => {});
        });
        if (met === "hidden") {
          hidden = await session.ensureVisible(page).then(() => false, () => true);
          if (!hidden && !page.dialog) met = await rendezvous(page);
        }
        observed = met === "observed";
      }
      let screenshot: Record<string, unknown> | undefined;
      let image: { data: string; mimeType: string } | undefined;
      let snapshot: Record<string, unknown> | undefined;
      let snapshotText = "";
      if (page.dialog) {
        warnings.push("dialog_open_blocks_observation: answer it with handle_dialog, then observe again");
      } else if (hidden) {
        warnings.push(
          "target_hidden: the page is in the background (focus preserve); no screenshot or snapshot",
        );
      } else {
        const [shotResult, snapResult] = await Promise.allSettled([
          shot ?? postActionImage(page, jpeg),
          observeSnapshot(session, page, level === "concise"),
        ]);
        if (shotResult.status === "fulfilled") {
          const s = shotResult.value;
          const saved = await app.store.writeEvidence("screenshots", jpeg ? "jpg" : "png", s.bytes);
          screenshot = {
            uri: saved.uri,
            mime_type: s.mimeType,
            width: s.width,
            height: s.height,
            // The spec's marker, as on an action's screenshot: the frames, not this image, say what settled.
            ...(observed ? {} : {
              marker: "compositor_rendezvous_unobserved",
              marker_note:
                "Image is not confirmed settled; retained temporal frames are the authority for settled visual state.",
            }),
          };
          const wantInline = args.inline_images ?? true;
          if (wantInline && s.data.length <= INLINE_IMAGE_LIMIT) {
            image = { data: s.data, mimeType: s.mimeType };
          } else if (wantInline) {
            screenshot.inline_omitted = `image is ${s.data.length} base64 bytes, over ${INLINE_IMAGE_LIMIT}`;
          }
        } else warnings.push(`screenshot_unavailable: ${cdpMessage(shotResult.reason)}`);
        if (snapResult.status === "fulfilled") {
          // Unlike an action, the caller asked to see the page: the target index is always shown.
          const presented = presentSnapshot(snapResult.value.snapshot, level);
          snapshot = presented.structured;
          snapshotText = presented.text;
        } else warnings.push(`snapshot_unavailable: ${cdpMessage(snapResult.reason)}`);
      }
      const dialog = page.dialog
        ? { open: true, type: page.dialog.type, message: page.dialog.message }
        : { open: false };
      const structured: Record<string, unknown> = {
        page: { page_id: page.id, url: page.url, title: page.title },
        dialog,
        ...(page.loading ? { loading: true } : {}),
        ...(screenshot ? { screenshot } : {}),
        ...(snapshot ? { snapshot } : {}),
        ...(warnings.length > 0 ? { warnings } : {}),
      };
      // The snapshot's text opens with the page line already; it is not said twice.
      const [snapshotHead, ...snapshotRest] = snapshotText ? snapshotText.split("\n") : [];
      const head = snapshotHead ?? `Page ${page.id} ${JSON.stringify(page.title)} ${page.url}`;
      const lines = [`${head}${page.loading ? " (loading)" : ""}`];
      if (page.dialog) lines.push(`dialog open: ${page.dialog.type} ${JSON.stringify(page.dialog.message)}`);
      if (screenshot) {
        lines.push(
          `screenshot ${screenshot.uri as string}${observed ? "" : " [compositor_rendezvous_unobserved]"}`,
        );
      }
      if (warnings.length > 0) lines.push(`warnings: ${warnings.join("; ")}`);
      lines.push(...snapshotRest);
      return output(lines.join("\n"), leanObservation(structured), image ? [image] : undefined);
    },
  }),
];
