/** The decoder's errors, in their own module so that every part can throw them without an import cycle. */

/** The data is not a well-formed JPEG: corrupt, truncated or inconsistent. */
export class JpegDecodeError extends Error {
  override name = "JpegDecodeError";
}

/** A well-formed JPEG this decoder deliberately does not handle (progressive, arithmetic, lossless, CMYK…). */
export class JpegUnsupportedError extends Error {
  override name = "JpegUnsupportedError";
}

export function truncated(what: string): JpegDecodeError {
  return new JpegDecodeError(`JPEG truncated: ${what}`);
}
