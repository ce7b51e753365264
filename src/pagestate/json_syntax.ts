/**
 * Pure: why a text that JSON.parse refused is not JSON. V8's messages do not always give a position
 * ("Unexpected token 'x', ... is not valid JSON"), and a file cut off mid-way must be told apart from one
 * that is wrong somewhere inside, so this scans the text once without building values: either the text
 * ends with something still open (truncated), or the first character that cannot continue it.
 */

export type JsonSyntaxProblem =
  | { kind: "truncated"; open: string }
  | { kind: "malformed"; position: number; reason: string };

type State = "value" | "value_or_close" | "key_or_close" | "key" | "colon" | "comma_or_close" | "end";

const LITERALS = ["true", "false", "null"];
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
/** A number cut off at the end of the text: `-`, `1.`, `1e`, `1e+`. */
const NUMBER_PREFIX = /-?(?:0|[1-9]\d*)?(?:\.\d*)?(?:[eE][+-]?\d*)?$/y;

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function openDescription(stack: string[], inString: boolean): string {
  const inner = stack[stack.length - 1];
  const what = inString ? "a string" : inner === "[" ? "an array" : inner === "{" ? "an object" : "a value";
  return `${what} is still open, ${stack.length} level(s) deep`;
}

/** Classifies a text JSON.parse rejected. (On valid JSON it reports the first trailing content, if any.) */
export function jsonSyntaxProblem(text: string): JsonSyntaxProblem {
  const n = text.length;
  const stack: string[] = [];
  let state: State = "value";
  let i = 0;
  const bad = (reason: string): JsonSyntaxProblem => ({ kind: "malformed", position: i, reason });
  const afterValue = (): State => stack.length === 0 ? "end" : "comma_or_close";
  while (true) {
    while (i < n && isSpace(text.charCodeAt(i))) i++;
    if (i >= n) {
      if (state === "end") return { kind: "malformed", position: n, reason: "no error found" };
      return { kind: "truncated", open: openDescription(stack, false) };
    }
    const c = text[i];
    if (state === "end") return bad(`unexpected ${JSON.stringify(c)} after the end of the JSON value`);
    if (state === "colon") {
      if (c !== ":") return bad(`expected ":" after an object key, found ${JSON.stringify(c)}`);
      i++;
      state = "value";
      continue;
    }
    if (state === "comma_or_close") {
      const top = stack[stack.length - 1];
      if (c === ",") {
        i++;
        state = top === "[" ? "value" : "key";
        continue;
      }
      if ((c === "]" && top === "[") || (c === "}" && top === "{")) {
        i++;
        stack.pop();
        state = afterValue();
        continue;
      }
      return bad(`expected "," or "${top === "[" ? "]" : "}"}", found ${JSON.stringify(c)}`);
    }
    if (state === "key_or_close" && c === "}") {
      i++;
      stack.pop();
      state = afterValue();
      continue;
    }
    if (state === "value_or_close" && c === "]") {
      i++;
      stack.pop();
      state = afterValue();
      continue;
    }
    if (state === "key_or_close" || state === "key") {
      if (c !== '"') return bad(`expected a quoted object key, found ${JSON.stringify(c)}`);
    }
    // A value (or a key, which is a string).
    if (c === '"') {
      const isKey = state === "key_or_close" || state === "key";
      let j = i + 1;
      for (; j < n; j++) {
        const d = text.charCodeAt(j);
        if (d === 0x22) break;
        if (d === 0x5c) j++;
        else if (d < 0x20) {
          i = j;
          return bad("a control character inside a string");
        }
      }
      if (j >= n) return { kind: "truncated", open: openDescription(stack, true) };
      i = j + 1;
      if (isKey) state = "colon";
      else state = afterValue();
      continue;
    }
    if (c === "{" || c === "[") {
      stack.push(c);
      i++;
      state = c === "{" ? "key_or_close" : "value_or_close";
      continue;
    }
    const literal = LITERALS.find((l) => l[0] === c);
    if (literal) {
      const got = text.slice(i, i + literal.length);
      if (got === literal) {
        i += literal.length;
        state = afterValue();
        continue;
      }
      if (i + got.length >= n && literal.startsWith(got)) {
        return { kind: "truncated", open: openDescription(stack, false) };
      }
      return bad(`unexpected ${JSON.stringify(got)} (not ${literal})`);
    }
    NUMBER.lastIndex = i;
    const num = NUMBER.exec(text);
    if (num) {
      i += num[0].length;
      // A number cut off at the very end ("1." or "1e") is truncation, not a bad character.
      if (i < n && /[.eE]/.test(text[i])) {
        NUMBER_PREFIX.lastIndex = i - num[0].length;
        if (NUMBER_PREFIX.test(text)) return { kind: "truncated", open: openDescription(stack, false) };
        return bad(`a malformed number ${JSON.stringify(text.slice(i - num[0].length, i + 2))}`);
      }
      state = afterValue();
      continue;
    }
    NUMBER_PREFIX.lastIndex = i;
    if (c === "-" && NUMBER_PREFIX.test(text)) {
      return { kind: "truncated", open: openDescription(stack, false) };
    }
    return bad(`unexpected ${JSON.stringify(c)} where a value was expected`);
  }
}
