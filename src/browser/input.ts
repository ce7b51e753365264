import type { PageTarget } from "./targets.ts";
import { ToolError } from "../errors.ts";

export type MouseButton = "left" | "right" | "middle";
export type Modifier = "Alt" | "Control" | "Meta" | "Shift";

const MODIFIER_BITS: Record<Modifier, number> = { Alt: 1, Control: 2, Meta: 4, Shift: 8 };

export function modifierMask(mods: readonly Modifier[]): number {
  return mods.reduce((mask, m) => mask | MODIFIER_BITS[m], 0);
}

export async function dispatchClick(
  page: PageTarget,
  x: number,
  y: number,
  opts: { button: MouseButton; clickCount: number; modifiers: readonly Modifier[] },
): Promise<void> {
  const modifiers = modifierMask(opts.modifiers);
  // Each step stops the sequence when a dialog opens: the page is blocked until it is handled.
  if (await page.sendInput("Input.dispatchMouseEvent", { type: "mouseMoved", x, y, modifiers })) return;
  for (let i = 1; i <= opts.clickCount; i++) {
    for (const type of ["mousePressed", "mouseReleased"] as const) {
      const interrupted = await page.sendInput("Input.dispatchMouseEvent", {
        type,
        x,
        y,
        button: opts.button,
        clickCount: i,
        modifiers,
      });
      if (interrupted) return;
    }
  }
}

interface KeyDef {
  key: string;
  code: string;
  keyCode: number;
  text?: string;
}

const NAMED_KEYS: Record<string, KeyDef> = {
  Enter: { key: "Enter", code: "Enter", keyCode: 13, text: "\r" },
  Tab: { key: "Tab", code: "Tab", keyCode: 9 },
  Escape: { key: "Escape", code: "Escape", keyCode: 27 },
  Backspace: { key: "Backspace", code: "Backspace", keyCode: 8 },
  Delete: { key: "Delete", code: "Delete", keyCode: 46 },
  Space: { key: " ", code: "Space", keyCode: 32, text: " " },
  ArrowUp: { key: "ArrowUp", code: "ArrowUp", keyCode: 38 },
  ArrowDown: { key: "ArrowDown", code: "ArrowDown", keyCode: 40 },
  ArrowLeft: { key: "ArrowLeft", code: "ArrowLeft", keyCode: 37 },
  ArrowRight: { key: "ArrowRight", code: "ArrowRight", keyCode: 39 },
  Home: { key: "Home", code: "Home", keyCode: 36 },
  End: { key: "End", code: "End", keyCode: 35 },
  PageUp: { key: "PageUp", code: "PageUp", keyCode: 33 },
  PageDown: { key: "PageDown", code: "PageDown", keyCode: 34 },
  Insert: { key: "Insert", code: "Insert", keyCode: 45 },
  Alt: { key: "Alt", code: "AltLeft", keyCode: 18 },
  Control: { key: "Control", code: "ControlLeft", keyCode: 17 },
  Meta: { key: "Meta", code: "MetaLeft", keyCode: 91 },
  Shift: { key: "Shift", code: "ShiftLeft", keyCode: 16 },
};
for (let i = 1; i <= 12; i++) NAMED_KEYS[`F${i}`] = { key: `F${i}`, code: `F${i}`, keyCode: 111 + i };

const ALIASES: Record<string, string> = {
  Return: "Enter",
  Esc: "Escape",
  Ctrl: "Control",
  Cmd: "Meta",
  Command: "Meta",
  Option: "Alt",
  Up: "ArrowUp",
  Down: "ArrowDown",
  Left: "ArrowLeft",
  Right: "ArrowRight",
  Del: "Delete",
};

const PUNCTUATION_CODES: Record<string, [string, number]> = {
  "-": ["Minus", 189],
  "=": ["Equal", 187],
  "[": ["BracketLeft", 219],
  "]": ["BracketRight", 221],
  ";": ["Semicolon", 186],
  "'": ["Quote", 222],
  ",": ["Comma", 188],
  ".": ["Period", 190],
  "/": ["Slash", 191],
  "\\": ["Backslash", 220],
  "`": ["Backquote", 192],
};

function keyDef(name: string): KeyDef | undefined {
  const canonical = ALIASES[name] ?? name;
  const named = NAMED_KEYS[canonical];
  if (named) return named;
  if ([...canonical].length !== 1) return undefined;
  const ch = canonical;
  if (/[a-zA-Z]/.test(ch)) {
    return { key: ch, code: `Key${ch.toUpperCase()}`, keyCode: ch.toUpperCase().charCodeAt(0), text: ch };
  }
  if (/[0-9]/.test(ch)) return { key: ch, code: `Digit${ch}`, keyCode: ch.charCodeAt(0), text: ch };
  const punct = PUNCTUATION_CODES[ch];
  if (punct) return { key: ch, code: punct[0], keyCode: punct[1], text: ch };
  return { key: ch, code: "", keyCode: 0, text: ch };
}

export interface KeyChord {
  modifiers: Modifier[];
  key: KeyDef;
}

/** Parses "Control+Shift+K" style chords; throws a structured error naming the bad part. */
export function parseChord(chord: string): KeyChord {
  const parts = chord === "+" ? ["+"] : chord.split(/\+(?!$)/);
  const modifiers: Modifier[] = [];
  let key: KeyDef | undefined;
  parts.forEach((raw, i) => {
    const name = ALIASES[raw] ?? raw;
    const last = i === parts.length - 1;
    if (!last) {
      if (name in MODIFIER_BITS) modifiers.push(name as Modifier);
      else throw badKey(chord, raw, "is not a modifier (Alt, Control, Meta, Shift)");
      return;
    }
    key = keyDef(name);
    if (!key) throw badKey(chord, raw, "is not a known key");
  });
  if (!key) throw badKey(chord, chord, "names no key");
  return { modifiers, key };
}

function badKey(chord: string, part: string, why: string): ToolError {
  return new ToolError({
    code: "invalid_argument",
    message: `In keys ${JSON.stringify(chord.slice(0, 60))}, ${JSON.stringify(part.slice(0, 30))} ${why}.`,
    retry: "never",
    recovery: 'Use key names like "Enter", "Tab", "ArrowDown", "a", or chords like "Control+a".',
    affected: { argument: "keys" },
  });
}

export async function dispatchChord(page: PageTarget, chord: KeyChord): Promise<void> {
  let mask = 0;
  for (const m of chord.modifiers) {
    mask |= MODIFIER_BITS[m];
    const def = NAMED_KEYS[m];
    await page.sendInput("Input.dispatchKeyEvent", {
      type: "rawKeyDown",
      key: def.key,
      code: def.code,
      windowsVirtualKeyCode: def.keyCode,
      modifiers: mask,
    });
  }
  const k = chord.key;
  // Text only flows when no command modifier is held; Shift alone still types.
  const typesText = k.text !== undefined && (mask & ~MODIFIER_BITS.Shift) === 0;
  const text = typesText && k.text && mask & MODIFIER_BITS.Shift ? k.text.toUpperCase() : k.text;
  if (
    await page.sendInput("Input.dispatchKeyEvent", {
      type: typesText ? "keyDown" : "rawKeyDown",
      key: k.key,
      code: k.code,
      windowsVirtualKeyCode: k.keyCode,
      modifiers: mask,
      ...(typesText ? { text, unmodifiedText: k.text } : {}),
    })
  ) return;
  await page.sendInput("Input.dispatchKeyEvent", {
    type: "keyUp",
    key: k.key,
    code: k.code,
    windowsVirtualKeyCode: k.keyCode,
    modifiers: mask,
  });
  for (const m of [...chord.modifiers].reverse()) {
    mask &= ~MODIFIER_BITS[m];
    const def = NAMED_KEYS[m];
    await page.sendInput("Input.dispatchKeyEvent", {
      type: "keyUp",
      key: def.key,
      code: def.code,
      windowsVirtualKeyCode: def.keyCode,
      modifiers: mask,
    });
  }
}

/** Moves the mouse; `buttons` is the held-button mask (1 = left) while dragging. True when a dialog interrupted. */
export async function dispatchMouseMove(
  page: PageTarget,
  x: number,
  y: number,
  buttons = 0,
): Promise<boolean> {
  return await page.sendInput("Input.dispatchMouseEvent", {
    type: "mouseMoved",
    x,
    y,
    buttons,
    ...(buttons & 1 ? { button: "left" as const } : {}),
  });
}

/** Presses or releases the left button at a point. True when a dialog interrupted. */
export async function dispatchLeftButton(
  page: PageTarget,
  type: "mousePressed" | "mouseReleased",
  x: number,
  y: number,
): Promise<boolean> {
  return await page.sendInput("Input.dispatchMouseEvent", {
    type,
    x,
    y,
    button: "left",
    buttons: type === "mousePressed" ? 1 : 0,
    clickCount: 1,
  });
}

/** One mouse-wheel event at a point; deltas in CSS px (positive dy scrolls down). */
export async function dispatchWheel(
  page: PageTarget,
  x: number,
  y: number,
  deltaX: number,
  deltaY: number,
): Promise<boolean> {
  return await page.sendInput("Input.dispatchMouseEvent", { type: "mouseWheel", x, y, deltaX, deltaY });
}
