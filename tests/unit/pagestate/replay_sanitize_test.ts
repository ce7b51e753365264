import {
  EventType,
  type eventWithTime,
  IncrementalSource,
  NodeType,
  type serializedNodeWithId,
} from "@rrweb/types";
import { assert, assertEquals } from "../../assert.ts";
import { neutralizeEvent } from "../../../src/pagestate/replay_sanitize.ts";

const el = (
  id: number,
  tagName: string,
  attributes: Record<string, string>,
  childNodes: serializedNodeWithId[] = [],
) => ({ type: NodeType.Element, id, tagName, attributes, childNodes }) as serializedNodeWithId;

const snapshot = (node: serializedNodeWithId): eventWithTime => ({
  type: EventType.FullSnapshot,
  data: { node, initialOffset: { left: 0, top: 0 } },
  timestamp: 1,
});

Deno.test("neutralizeEvent rewrites resource hints and meta refresh in a full snapshot, on a copy", () => {
  const head = el(3, "head", {}, [
    el(4, "link", { rel: "preconnect", href: "http://127.0.0.1:9/" }),
    el(5, "link", { rel: "stylesheet", href: "/a.css" }),
    el(6, "meta", { "http-equiv": "Refresh", content: "0;url=/elsewhere" }),
  ]);
  const doc = {
    type: NodeType.Document,
    id: 1,
    childNodes: [el(2, "html", {}, [head])],
  } as serializedNodeWithId;
  const event = snapshot(doc);
  const before = JSON.stringify(event);
  const out = neutralizeEvent(event);
  assert(out !== event, "a copy");
  assertEquals(JSON.stringify(event), before, "the input is untouched");
  const text = JSON.stringify(out);
  assert(text.includes('"rel":"x-krometrail-replay-preconnect"'), text);
  assert(text.includes('"rel":"stylesheet"'), "other links stay");
  assert(text.includes('"http-equiv":"x-krometrail-replay-Refresh"'), text);
});

Deno.test("neutralizeEvent returns the same event when nothing can reach the network", () => {
  const event = snapshot(el(1, "div", { class: "a" }, [el(2, "link", { rel: "stylesheet" })]));
  assert(neutralizeEvent(event) === event);
  const move: eventWithTime = {
    type: EventType.IncrementalSnapshot,
    data: { source: IncrementalSource.Scroll, id: 1, x: 0, y: 10 },
    timestamp: 2,
  };
  assert(neutralizeEvent(move) === move);
});

Deno.test("neutralizeEvent rewrites added nodes and attribute changes in mutations", () => {
  const event: eventWithTime = {
    type: EventType.IncrementalSnapshot,
    data: {
      source: IncrementalSource.Mutation,
      texts: [],
      removes: [],
      adds: [{
        parentId: 3,
        nextId: null,
        node: el(9, "link", { rel: "dns-prefetch", href: "//x.invalid" }),
      }],
      attributes: [{ id: 4, attributes: { rel: "prefetch" } }, { id: 5, attributes: { class: "b" } }],
    },
    timestamp: 3,
  };
  const text = JSON.stringify(neutralizeEvent(event));
  assert(text.includes('"rel":"x-krometrail-replay-dns-prefetch"'), text);
  assert(text.includes('"rel":"x-krometrail-replay-prefetch"'), text);
  assert(text.includes('"class":"b"'), text);
});
