import { z } from "zod";

/** Argument shapes shared by every tool (names fixed in DESIGN.md). Bounds keep 1 MB inputs out. */
export const pageId = z.string().max(16).describe("Default: selected page");
export const detail = z.enum(["concise", "expanded", "full"]);
export const inlineImages = z.boolean();
export const ref = z.string().max(64).describe("Ref from snapshot_page");
export const selector = z.string().max(2_000).describe("CSS selector (escape hatch)");
export const coordinate = z.number().min(-100_000).max(100_000);

export const locator = z.strictObject({
  role: z.string().max(64).optional(),
  name: z.string().max(1_000).optional(),
  label: z.string().max(1_000).optional(),
  text: z.string().max(1_000).optional(),
  test_id: z.string().max(256).optional(),
  exact: z.boolean().optional(),
  scope: z.string().max(64).optional(),
  frame: z.string().max(256).optional(),
}).describe("One of role(+name), label, text, test_id; scope: ref; frame: name or iframe ref");

export const targetFields = {
  ref: ref.optional(),
  locator: locator.optional(),
  selector: selector.optional(),
  x: coordinate.optional(),
  y: coordinate.optional(),
};

export const everyNthFrame = z.number().int().min(1).max(60).describe("Screencast stride 1-60; default 1");
