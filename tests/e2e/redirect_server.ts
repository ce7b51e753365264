/** A loopback HTTP server that redirects every request to a chosen location (or answers JSON), counting hits. */
export interface Redirector {
  origin: string;
  hits(): number;
  /** Answer with this body instead of redirecting (until the location function returns non-empty again). */
  json(body: unknown): void;
  close(): Promise<void>;
}

export function redirectingServer(location: () => string): Redirector {
  let hits = 0;
  let body: unknown = { error: "no location set" };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () => {
    hits++;
    const target = location();
    if (target) return new Response(null, { status: 302, headers: { location: target } });
    return Response.json(body);
  });
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    hits: () => hits,
    json: (b) => {
      body = b;
    },
    close: () => server.shutdown(),
  };
}
