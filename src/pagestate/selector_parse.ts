/**
 * The CSS selector parser of the page-state cores: a closed subset of Selectors Level 4 parsed into a tree the
 * matcher in `selector.ts` walks. Anything outside the subset is refused with the position and the construct,
 * so a caller can tell the agent what to write instead. Pure.
 */

export const SELECTOR_MAX_LENGTH = 500;

const SUPPORTED_PSEUDOS =
  ":not() :is() :where() :has() :checked :disabled :enabled :empty :first-child :last-child " +
  ":nth-child() :nth-of-type() :only-child";

export class SelectorError extends Error {
  constructor(message: string, readonly position: number) {
    super(message);
    this.name = "SelectorError";
  }
}

export type Combinator = " " | ">" | "+" | "~";

export type AttrOperator = "=" | "~=" | "|=" | "^=" | "$=" | "*=";

export interface AttrTest {
  /** Lower-case attribute name. */
  name: string;
  op?: AttrOperator;
  value: string;
  caseInsensitive: boolean;
}

export type Pseudo =
  | { kind: "not" | "is" | "where"; list: ComplexSelector[] }
  | { kind: "has"; list: RelativeSelector[] }
  | { kind: "checked" | "disabled" | "enabled" | "empty" | "first-child" | "last-child" | "only-child" }
  | { kind: "nth-child" | "nth-of-type"; a: number; b: number };

export interface Compound {
  /** Lower-case tag, or undefined for the universal selector / none given. */
  tag?: string;
  ids: string[];
  classes: string[];
  attrs: AttrTest[];
  pseudos: Pseudo[];
}

/** compounds[0] is the leftmost; combinators[i] joins compounds[i] and compounds[i + 1]. */
export interface ComplexSelector {
  compounds: Compound[];
  combinators: Combinator[];
}

/** A `:has()` argument: the leading combinator relates the anchor to the leftmost compound. */
export interface RelativeSelector {
  leading: " " | ">";
  selector: ComplexSelector;
}

export interface ParsedSelector {
  text: string;
  list: ComplexSelector[];
}

const isWs = (c: string): boolean => c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f";

function isIdentStart(c: string): boolean {
  return (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || c === "_" || c === "-" || c === "\\" ||
    c.charCodeAt(0) >= 0x80;
}

function isIdentChar(c: string): boolean {
  return isIdentStart(c) || (c >= "0" && c <= "9");
}

function isHex(c: string): boolean {
  return (c >= "0" && c <= "9") || (c >= "a" && c <= "f") || (c >= "A" && c <= "F");
}

class Parser {
  pos = 0;
  constructor(readonly src: string) {}

  fail(what: string, at = this.pos): never {
    throw new SelectorError(`${what} at position ${at} of selector ${JSON.stringify(this.src)}`, at);
  }

  peek(offset = 0): string {
    return this.src.charAt(this.pos + offset);
  }

  eof(): boolean {
    return this.pos >= this.src.length;
  }

  skipWs(): boolean {
    const start = this.pos;
    while (!this.eof() && isWs(this.peek())) this.pos++;
    return this.pos > start;
  }

  /** An identifier with CSS escapes decoded; `what` names it in the error when there is none. */
  ident(what: string): string {
    const c = this.peek();
    const startsOk = isIdentStart(c) && !(c === "-" && /[0-9]/.test(this.peek(1)));
    if (!startsOk) {
      this.fail(this.eof() ? `expected ${what}, found the end` : `expected ${what}, found "${c}"`);
    }
    let out = "";
    while (!this.eof() && isIdentChar(this.peek())) {
      if (this.peek() === "\\") out += this.escape();
      else out += this.src.charAt(this.pos++);
    }
    return out;
  }

  escape(): string {
    this.pos++; // the backslash
    if (this.eof()) this.fail("an escape at the end");
    let hex = "";
    while (hex.length < 6 && isHex(this.peek())) hex += this.src.charAt(this.pos++);
    if (hex.length > 0) {
      if (isWs(this.peek())) this.pos++;
      const code = parseInt(hex, 16);
      return code === 0 || code > 0x10ffff ? "\ufffd" : String.fromCodePoint(code);
    }
    return this.src.charAt(this.pos++);
  }

  string(): string {
    const quote = this.src.charAt(this.pos++);
    const start = this.pos - 1;
    let out = "";
    while (true) {
      if (this.eof()) this.fail("an unterminated string", start);
      const c = this.peek();
      if (c === quote) {
        this.pos++;
        return out;
      }
      if (c === "\n") this.fail("a newline inside a string");
      if (c === "\\") {
        if (this.peek(1) === "\n") {
          this.pos += 2;
          continue;
        }
        out += this.escape();
      } else {
        out += c;
        this.pos++;
      }
    }
  }

  selectorList(stopAtParen: boolean): ComplexSelector[] {
    const list: ComplexSelector[] = [];
    while (true) {
      this.skipWs();
      list.push(this.complex(stopAtParen));
      this.skipWs();
      if (this.peek() === ",") {
        this.pos++;
        continue;
      }
      return list;
    }
  }

  complex(stopAtParen: boolean): ComplexSelector {
    const compounds = [this.compound()];
    const combinators: Combinator[] = [];
    while (true) {
      const hadWs = this.skipWs();
      const c = this.peek();
      if (this.eof() || c === "," || (stopAtParen && c === ")")) break;
      let comb: Combinator;
      if (c === ">" || c === "+" || c === "~") {
        comb = c;
        this.pos++;
        this.skipWs();
      } else if (hadWs) {
        comb = " ";
      } else {
        this.fail(`unexpected "${c}"`);
      }
      combinators.push(comb);
      compounds.push(this.compound());
    }
    return { compounds, combinators };
  }

  compound(): Compound {
    const start = this.pos;
    const compound: Compound = { ids: [], classes: [], attrs: [], pseudos: [] };
    const c0 = this.peek();
    if (c0 === "*") {
      this.pos++;
      if (this.peek() === "|") this.fail("namespace prefixes are not supported");
    } else if (isIdentStart(c0)) {
      compound.tag = this.ident("a tag name").toLowerCase();
      if (this.peek() === "|") this.fail("namespace prefixes are not supported");
    }
    while (!this.eof()) {
      const c = this.peek();
      if (c === "#") {
        this.pos++;
        compound.ids.push(this.hashName());
      } else if (c === ".") {
        this.pos++;
        compound.classes.push(this.ident('a class name after "."'));
      } else if (c === "[") {
        compound.attrs.push(this.attribute());
      } else if (c === ":") {
        compound.pseudos.push(this.pseudo());
      } else {
        break;
      }
    }
    if (this.pos === start) {
      if (this.eof()) this.fail("expected a selector, found the end");
      const c = this.peek();
      if (c === "&") this.fail('the nesting selector "&" is not supported');
      this.fail(`expected a selector, found "${c}"`);
    }
    // Cheap tests first: a `:has()` walks a subtree, so it runs only when everything else held.
    compound.pseudos.sort((a, b) => Number(a.kind === "has") - Number(b.kind === "has"));
    return compound;
  }

  hashName(): string {
    let out = "";
    while (!this.eof() && isIdentChar(this.peek())) {
      if (this.peek() === "\\") out += this.escape();
      else out += this.src.charAt(this.pos++);
    }
    if (out === "") this.fail('expected an id after "#"');
    return out;
  }

  attribute(): AttrTest {
    const open = this.pos;
    this.pos++; // [
    this.skipWs();
    if (this.peek() === "|" || this.peek() === "*") this.fail("namespace prefixes are not supported");
    const name = this.ident("an attribute name").toLowerCase();
    if (this.peek() === "|" && this.peek(1) !== "=") this.fail("namespace prefixes are not supported");
    this.skipWs();
    if (this.peek() === "]") {
      this.pos++;
      return { name, value: "", caseInsensitive: false };
    }
    let op: AttrOperator;
    const c = this.peek();
    if (c === "=") {
      op = "=";
      this.pos++;
    } else if ("~|^$*".includes(c) && c !== "" && this.peek(1) === "=") {
      op = (c + "=") as AttrOperator;
      this.pos += 2;
    } else {
      this.fail(
        this.eof() ? "an unterminated attribute selector" : `unexpected "${c}" in an attribute selector`,
      );
    }
    this.skipWs();
    const q = this.peek();
    const value = q === '"' || q === "'" ? this.string() : this.ident("an attribute value");
    this.skipWs();
    let caseInsensitive = false;
    const flag = this.peek();
    if (flag === "i" || flag === "I" || flag === "s" || flag === "S") {
      caseInsensitive = flag === "i" || flag === "I";
      this.pos++;
      this.skipWs();
    }
    if (this.peek() !== "]") {
      this.fail(
        this.eof()
          ? "an unterminated attribute selector"
          : `unexpected "${this.peek()}" in an attribute selector`,
        this.eof() ? open : this.pos,
      );
    }
    this.pos++;
    return { name, op, value, caseInsensitive };
  }

  pseudo(): Pseudo {
    const start = this.pos;
    this.pos++; // :
    if (this.peek() === ":") {
      this.pos++;
      const name = isIdentStart(this.peek()) ? this.ident("a pseudo-element") : "";
      this.fail(`pseudo-elements ("::${name}") are not supported`, start);
    }
    const name = this.ident("a pseudo-class name").toLowerCase();
    const hasArgs = this.peek() === "(";
    const unsupported = (): never =>
      this.fail(
        `unsupported pseudo-class ":${name}${hasArgs ? "()" : ""}" (supported: ${SUPPORTED_PSEUDOS})`,
        start,
      );
    switch (name) {
      case "checked":
      case "disabled":
      case "enabled":
      case "empty":
      case "first-child":
      case "last-child":
      case "only-child":
        if (hasArgs) unsupported();
        return { kind: name };
      case "not":
      case "is":
      case "where": {
        if (!hasArgs) this.fail(`":${name}" needs an argument, as in ":${name}(.selected)"`, start);
        this.pos++;
        const list = this.selectorList(true);
        this.closeParen(name);
        return { kind: name, list };
      }
      case "has": {
        if (!hasArgs) this.fail(`":has" needs an argument, as in ":has(> img)"`, start);
        this.pos++;
        const list: RelativeSelector[] = [];
        while (true) {
          this.skipWs();
          let leading: " " | ">" = " ";
          const c = this.peek();
          if (c === ">") {
            leading = ">";
            this.pos++;
          } else if (c === "+" || c === "~") {
            this.fail(`":has()" with a leading "${c}" is not supported (only descendant and ">")`);
          }
          this.skipWs();
          list.push({ leading, selector: this.complex(true) });
          this.skipWs();
          if (this.peek() !== ",") break;
          this.pos++;
        }
        this.closeParen(name);
        return { kind: "has", list };
      }
      case "nth-child":
      case "nth-of-type": {
        if (!hasArgs) this.fail(`":${name}" needs an argument, as in ":${name}(2n+1)"`, start);
        this.pos++;
        const { a, b } = this.anPlusB();
        this.skipWs();
        if (this.peek() !== ")") {
          if (this.src.startsWith("of", this.pos)) this.fail(`":${name}(… of S)" is not supported`);
          this.fail(`expected ")" after the ":${name}" argument`);
        }
        this.pos++;
        return { kind: name, a, b };
      }
      default:
        return unsupported();
    }
  }

  closeParen(name: string): void {
    this.skipWs();
    if (this.peek() !== ")") {
      this.fail(
        this.eof() ? `an unclosed ":${name}("` : `expected ")" to close ":${name}(", found "${this.peek()}"`,
      );
    }
    this.pos++;
  }

  /** `an+b`, `odd`, `even`, with the whitespace CSS allows around the sign of b. */
  anPlusB(): { a: number; b: number } {
    this.skipWs();
    const start = this.pos;
    const rest = this.src.slice(this.pos).toLowerCase();
    if (rest.startsWith("odd")) {
      this.pos += 3;
      return { a: 2, b: 1 };
    }
    if (rest.startsWith("even")) {
      this.pos += 4;
      return { a: 2, b: 0 };
    }
    let sign = 1;
    if (this.peek() === "+" || this.peek() === "-") {
      sign = this.peek() === "-" ? -1 : 1;
      this.pos++;
    }
    const digits = this.digits();
    if (this.peek() === "n" || this.peek() === "N") {
      this.pos++;
      const a = sign * (digits === "" ? 1 : parseInt(digits, 10));
      this.skipWs();
      const c = this.peek();
      if (c === "+" || c === "-") {
        this.pos++;
        this.skipWs();
        const bd = this.digits();
        if (bd === "") this.fail("expected a number in an an+b argument");
        return { a, b: (c === "-" ? -1 : 1) * parseInt(bd, 10) };
      }
      return { a, b: 0 };
    }
    if (digits === "") this.fail("expected an an+b argument such as 2n+1, odd or 3", start);
    return { a: 0, b: sign * parseInt(digits, 10) };
  }

  digits(): string {
    let out = "";
    while (this.peek() >= "0" && this.peek() <= "9" && !this.eof()) out += this.src.charAt(this.pos++);
    return out;
  }
}

export function parseSelector(text: string): ParsedSelector {
  if (text.length > SELECTOR_MAX_LENGTH) {
    throw new SelectorError(
      `the selector is ${text.length} characters; the limit is ${SELECTOR_MAX_LENGTH}`,
      SELECTOR_MAX_LENGTH,
    );
  }
  const parser = new Parser(text);
  parser.skipWs();
  if (parser.eof()) throw new SelectorError("the selector is empty", 0);
  const list = parser.selectorList(false);
  if (!parser.eof()) parser.fail(`unexpected "${parser.peek()}"`);
  return { text, list };
}
