/** Standalone shape checks: secrets recognised by their own form, with no key name in front. */

export function looksLikeCard(raw: string): boolean {
  const digits = raw.replace(/[ -]/g, "");
  if (digits.length < 13 || digits.length > 19) return false;
  const groups = raw.split(/[ -]/);
  if (groups.length === 1) {
    // Plain runs are often ids or ms timestamps; only accept real card prefixes.
    if (!/^[2-6]/.test(digits)) return false;
  } else {
    if (/ /.test(raw) && /-/.test(raw)) return false;
    const lens = groups.map((g) => g.length);
    const last = lens[lens.length - 1];
    const fours = lens.length >= 4 && lens.slice(0, -1).every((n) => n === 4) && last >= 1 && last <= 4;
    const amexOrDiners = lens.length === 3 && lens[0] === 4 && lens[1] === 6 && (last === 4 || last === 5);
    if (!fours && !amexOrDiners) return false;
  }
  return luhn(digits);
}

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Hex digests and keys (≥32 hex with letters and digits), or base64-ish runs whose character classes
 * change often, as random data does (~0.6 changes per char) and camelCase identifiers and paths do
 * not (~0.2-0.4). UUIDs are identifiers, kept.
 */
export function looksLikeKey(raw: string): boolean {
  const body = raw.replace(/=+$/, "");
  if (body.length < 32 || UUID.test(body)) return false;
  let lower = 0, upper = 0, digit = 0, changes = 0, prev = -1;
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    const cls = c >= 97 && c <= 122 ? 0 : c >= 65 && c <= 90 ? 1 : c >= 48 && c <= 57 ? 2 : -1;
    if (cls < 0) continue;
    if (cls === 0) lower++;
    else if (cls === 1) upper++;
    else digit++;
    if (prev >= 0 && cls !== prev) changes++;
    prev = cls;
  }
  const alnum = lower + upper + digit;
  if (/^[0-9a-fA-F]+$/.test(body)) return digit > 0 && lower + upper > 0;
  const classes = (lower > 0 ? 1 : 0) + (upper > 0 ? 1 : 0) + (digit > 0 ? 1 : 0);
  if (classes < 2 || alnum < 24) return false;
  const ratio = changes / alnum;
  return ratio >= 0.5 || (ratio >= 0.3 && digit >= 2);
}
