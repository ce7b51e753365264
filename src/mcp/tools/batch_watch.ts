/**
 * What a batch knows of one running step, so its report is true when the deadline cuts in: whether
 * the step began an interaction (dispatched input), and a gate that keeps a step the batch has given
 * up on from dispatching afterwards (spec: a pre-dispatch timeout is a failed step without an
 * interaction record, so it must stay one).
 */
import type { BrowserSession } from "../../browser/session.ts";
import type { ToolError } from "../../errors.ts";
import type { AppContext } from "../context.ts";

export class StepWatch {
  /** The first interaction the step began: from then on its input may have reached the page. */
  anchor?: string;
  #stopped = false;

  /** The batch gave up before the step dispatched; it may not begin an interaction from now on. */
  stop(): void {
    this.#stopped = true;
  }

  get stopped(): boolean {
    return this.#stopped;
  }
}

/**
 * The step's own view of the app. Every interaction starts by taking an id from the session
 * (before any input is dispatched), so that is where the step is watched and, once stopped, refused.
 * A refused step has already subscribed its request watch, which ends on that watch's own limit.
 */
export function watchedApp(app: AppContext, watch: StepWatch, stoppedError: () => ToolError): AppContext {
  const browsers = new Proxy(app.browsers, {
    get(target, key) {
      if (key === "require") return () => watchedSession(target.require(), watch, stoppedError);
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { ...app, browsers };
}

function watchedSession(session: BrowserSession, watch: StepWatch, stoppedError: () => ToolError) {
  return new Proxy(session, {
    get(target, key) {
      if (key === "nextInteractionId") {
        return () => {
          if (watch.stopped) throw stoppedError();
          const id = target.nextInteractionId();
          watch.anchor ??= id;
          return id;
        };
      }
      // The session keeps private state: its methods and accessors run against the session itself.
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
    set(target, key, value) {
      return Reflect.set(target, key, value, target);
    },
  });
}
