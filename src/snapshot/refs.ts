/**
 * A ref is one short opaque string: session ordinal, page ordinal, document generation and the
 * backend DOM node id. Agents copy it verbatim; only this module reads its parts.
 */
export interface RefParts {
  session: number;
  page: number;
  generation: number;
  node: number;
}

const REF = /^s(\d{1,9})p(\d{1,9})g(\d{1,9})n(\d{1,12})$/;

export function encodeRef(parts: RefParts): string {
  return `s${parts.session}p${parts.page}g${parts.generation}n${parts.node}`;
}

export function decodeRef(ref: string): RefParts | undefined {
  const m = REF.exec(ref);
  if (!m) return undefined;
  return { session: Number(m[1]), page: Number(m[2]), generation: Number(m[3]), node: Number(m[4]) };
}
