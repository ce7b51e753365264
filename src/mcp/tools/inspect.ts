import { z } from "zod";
import { cdpMessage } from "../../browser/cdp.ts";
import { dialogOpen } from "../../control/interaction.ts";
import { evaluateExpression } from "../../control/evaluate.ts";
import { decodeBase64, pngSize } from "../../control/observation.ts";
import { pageForTarget, resolveTarget } from "../../control/targeting.ts";
import { limitExceeded, ToolError } from "../../errors.ts";
import { type Detail, listAssets, listFrames } from "../../browser/frames.ts";
import type { BrowserSession } from "../../browser/session.ts";
import type { PageTarget } from "../../browser/targets.ts";
import { currentSnapshot } from "../../snapshot/acquire.ts";
import { presentSnapshot } from "../../snapshot/present.ts";
import { defineTool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import { output } from "../response.ts";
import { detail, inlineImages, pageId, targetFields } from "../schemas.ts";
import { advertiseAs } from "../schema_compact.ts";

/** Inline images above this size go by resource reference only. */
const INLINE_IMAGE_LIMIT = 1_500_000;
const FULL_PAGE_MAX_HEIGHT = 16_384;

export const inspectTools = [
  defineTool({
    name: "snapshot_page",
    capability: "control",
    output: OUTPUT_SCHEMAS.snapshot_page,
    description:
      "Accessibility snapshot with refs. concise: ranked target index; expanded: structure; full: all.",
    input: z.strictObject({ page_id: pageId.optional(), detail: detail.optional() }),
    annotations: { readOnlyHint: true },
    handler: async (args, app) => {
      const s = app.browsers.require();
      const page = s.page(args.page_id);
      if (page.dialog) throw dialogOpen(page);
      const { snapshot } = await currentSnapshot(s, page);
      const presented = presentSnapshot(snapshot, args.detail ?? "concise");
      return output(presented.text, presented.structured);
    },
  }),
  defineTool({
    name: "take_screenshot",
    capability: "control",
    output: OUTPUT_SCHEMAS.take_screenshot,
    description: "Screenshot the viewport, the full page, an element (ref/locator/selector) or a region.",
    input: z.strictObject({
      page_id: pageId.optional(),
      full_page: z.boolean().optional(),
      ref: targetFields.ref,
      locator: targetFields.locator,
      selector: targetFields.selector,
      region: advertiseAs(
        z.strictObject({
          x: z.number().min(0).max(100_000),
          y: z.number().min(0).max(100_000),
          width: z.number().min(1).max(16_384),
          height: z.number().min(1).max(16_384),
        }),
        { type: "object", description: "{x, y, width, height} viewport CSS px" },
      ).optional(),
      format: z.enum(["png", "jpeg"]).optional(),
      inline_images: inlineImages.optional(),
    }),
    annotations: { readOnlyHint: true },
    handler: async (args, app) => {
      const s = app.browsers.require();
      const spec = { ref: args.ref, locator: args.locator, selector: args.selector };
      const elementForms = [args.ref, args.locator, args.selector].filter((v) => v !== undefined).length;
      const modes = elementForms + (args.full_page ? 1 : 0) + (args.region ? 1 : 0);
      if (modes > 1 || elementForms > 1) {
        throw new ToolError({
          code: "invalid_arguments",
          message: "Choose one of: an element (ref, locator or selector), full_page, or region.",
          retry: "never",
          recovery: "Pass only one screenshot mode; omit all of them for the viewport.",
        });
      }
      const page = elementForms > 0 ? pageForTarget(s, spec, args.page_id) : s.page(args.page_id);
      if (page.dialog) throw dialogOpen(page);
      // A background tab paints nothing; under the foreground policy bring it forward first.
      await s.ensureVisible(page);
      const metrics = await page.send("Page.getLayoutMetrics");
      const vv = metrics.cssVisualViewport;
      let clip: { x: number; y: number; width: number; height: number; scale: number } | undefined;
      let mode = "viewport";
      if (args.full_page) {
        mode = "full_page";
        const height = Math.ceil(metrics.cssContentSize.height);
        if (height > FULL_PAGE_MAX_HEIGHT) {
          throw limitExceeded(
            "full-page height (CSS px)",
            height,
            FULL_PAGE_MAX_HEIGHT,
            "Use region screenshots.",
          );
        }
        clip = { x: 0, y: 0, width: Math.ceil(metrics.cssContentSize.width), height, scale: 1 };
      } else if (args.region) {
        mode = "region";
        clip = { ...args.region, scale: 1 };
      } else if (elementForms > 0) {
        mode = "element";
        const target = await resolveTarget(s, spec, page.id);
        if (target.kind !== "element") throw new Error("unreachable");
        await page.send("DOM.scrollIntoViewIfNeeded", { backendNodeId: target.backendNodeId }).catch(
          () => {},
        );
        const after = (await page.send("Page.getLayoutMetrics")).cssVisualViewport;
        const { model } = await page.send("DOM.getBoxModel", { backendNodeId: target.backendNodeId }).catch(
          () => {
            throw new ToolError({
              code: "element_not_visible",
              message: "The element has no box to capture.",
              retry: "after_recovery",
              recovery: "Wait until it is rendered, or screenshot the viewport.",
            });
          },
        );
        const xs = [model.border[0], model.border[2], model.border[4], model.border[6]];
        const ys = [model.border[1], model.border[3], model.border[5], model.border[7]];
        const x = Math.min(...xs), y = Math.min(...ys);
        clip = {
          x: x + after.pageX,
          y: y + after.pageY,
          width: Math.max(1, Math.max(...xs) - x),
          height: Math.max(1, Math.max(...ys) - y),
          scale: 1,
        };
      }
      const format = args.format ?? "png";
      const shot = await page.send("Page.captureScreenshot", {
        format,
        ...(format === "jpeg" ? { quality: 80 } : {}),
        ...(clip ? { clip, captureBeyondViewport: mode === "full_page" } : {}),
      }, 15_000).catch((err) => {
        throw new ToolError({
          code: "screenshot_failed",
          message: `The browser could not capture the screenshot: ${cdpMessage(err)}`,
          retry: "safe",
          recovery: "Retry; if it persists, reload the page.",
          affected: { page_id: page.id },
        });
      });
      const bytes = decodeBase64(shot.data);
      const saved = await app.store.writeEvidence("screenshots", format === "png" ? "png" : "jpg", bytes);
      const size = format === "png" ? pngSize(bytes) : {
        width: Math.round(clip?.width ?? vv.clientWidth),
        height: Math.round(clip?.height ?? vv.clientHeight),
      };
      const wantInline = args.inline_images ?? true;
      const inline = wantInline && shot.data.length <= INLINE_IMAGE_LIMIT;
      const structured = {
        page_id: page.id,
        mode,
        uri: saved.uri,
        mime_type: format === "png" ? "image/png" : "image/jpeg",
        bytes: saved.bytes,
        ...size,
        inline,
        ...(wantInline && !inline
          ? { inline_omitted: `image is ${shot.data.length} base64 bytes, over ${INLINE_IMAGE_LIMIT}` }
          : {}),
      };
      return output(
        `Screenshot (${mode}) ${size.width}x${size.height} ${saved.uri}`,
        structured,
        inline ? [{ data: shot.data, mimeType: structured.mime_type }] : undefined,
      );
    },
  }),
  defineTool({
    name: "evaluate_page",
    capability: "control",
    output: OUTPUT_SCHEMAS.evaluate_page,
    description: "Evaluate a JavaScript expression in the page; promises are awaited; returns JSON.",
    input: z.strictObject({
      expression: z.string().max(100_000),
      page_id: pageId.optional(),
      timeout_ms: z.number().int().min(10).max(60_000).optional(),
    }),
    handler: async (args, app) => {
      const s = app.browsers.require();
      const page = s.page(args.page_id);
      if (page.dialog) throw dialogOpen(page);
      const r = await evaluateExpression(page, args.expression, args.timeout_ms ?? 10_000);
      const json = JSON.stringify(r.value) ?? "null";
      const note = r.dropped
        ? `\n(${r.dropped.count} function or symbol value(s) left out, as JSON does: ${
          r.dropped.paths.join(", ")
        })`
        : "";
      return output(json + note, {
        page_id: page.id,
        type: r.type,
        value: r.value,
        ...r.dropped ? { dropped: r.dropped } : {},
      });
    },
  }),
  defineTool({
    name: "inspect_page",
    capability: "control",
    output: OUTPUT_SCHEMAS.inspect_page,
    description:
      "URL, title, viewport, scroll, load and history state of a page; include frames and/or privacy-bounded assets.",
    input: z.strictObject({
      page_id: pageId.optional(),
      include: z.array(z.enum(["frames", "assets"])).max(2).optional(),
      detail: detail.optional(),
    }),
    annotations: { readOnlyHint: true },
    handler: async (args, app) => {
      const s = app.browsers.require();
      const page = s.page(args.page_id);
      const base = {
        ...page.describe(page.id === s.selectedPageId),
        loading: page.loading,
        document_generation: page.generation,
      };
      if (page.dialog) {
        const skipped = args.include?.length ? { include_skipped: "dialog_open" } : {};
        return output(`${page.id} ${page.url} (dialog open: ${page.dialog.type})`, { ...base, ...skipped });
      }
      const [metrics, history] = await Promise.all([
        page.send("Page.getLayoutMetrics"),
        page.send("Page.getNavigationHistory"),
      ]);
      const vv = metrics.cssVisualViewport;
      const structured = {
        ...base,
        viewport: { width: vv.clientWidth, height: vv.clientHeight, scale: vv.scale, zoom: vv.zoom ?? 1 },
        layout_viewport: {
          width: metrics.cssLayoutViewport.clientWidth,
          height: metrics.cssLayoutViewport.clientHeight,
        },
        scroll: { x: vv.pageX, y: vv.pageY },
        content_size: { width: metrics.cssContentSize.width, height: metrics.cssContentSize.height },
        history: {
          index: history.currentIndex,
          length: history.entries.length,
          can_go_back: history.currentIndex > 0,
          can_go_forward: history.currentIndex < history.entries.length - 1,
        },
      };
      const extra = await inspectExtras(s, page, args.include ?? [], args.detail ?? "concise");
      return output(
        `${page.id} ${
          JSON.stringify(page.title)
        } ${page.url}\nviewport ${vv.clientWidth}x${vv.clientHeight} scroll ${vv.pageX},${vv.pageY}; history ${
          history.currentIndex + 1
        }/${history.entries.length}${page.loading ? "; loading" : ""}${extra.text}`,
        { ...structured, ...extra.structured },
      );
    },
  }),
];

/** inspect_page's optional frame structure and asset inventory (spec: Inspection). */
async function inspectExtras(
  s: BrowserSession,
  page: PageTarget,
  include: Array<"frames" | "assets">,
  level: Detail,
): Promise<{ text: string; structured: Record<string, unknown> }> {
  const [frames, assets] = await Promise.all([
    include.includes("frames") ? listFrames(s, page, level) : undefined,
    include.includes("assets") ? listAssets(page, level) : undefined,
  ]);
  const lines: string[] = [];
  if (frames) {
    lines.push(`frames ${frames.total}:`);
    for (const f of frames.frames) {
      lines.push(
        `  ${f.frame_id}${f.parent_frame_id ? ` <- ${f.parent_frame_id}` : " (main)"} ${
          JSON.stringify(f.name)
        } ${f.same_process ? "same-process" : "out-of-process"} ${
          f.same_origin === null ? "origin?" : f.same_origin ? "same-origin" : "cross-origin"
        } ${f.path ?? f.url}`,
      );
    }
  }
  if (assets) {
    const counts = Object.entries(assets.counts).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n}`);
    lines.push(`assets ${assets.total}: ${counts.join(", ") || "none"}`);
    for (const a of assets.sample) lines.push(`  ${a.kind} ${a.url}${a.failed ? " (failed)" : ""}`);
    const o = assets.omitted;
    if (o.presentation + o.source > 0) {
      lines.push(`  (${o.presentation} not shown, ${o.source} not acquired)`);
    }
  }
  return {
    text: lines.length > 0 ? `\n${lines.join("\n")}` : "",
    structured: { ...(frames ? { frames } : {}), ...(assets ? { assets } : {}) },
  };
}
