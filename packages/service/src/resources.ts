// What a service's start opened, as one value: each step registers how to close what it opened as it
// opens it, and the service closes them all once, last first. A start that fails half-way closes what its
// earlier steps opened (startOrUnwind), so that no lock, published endpoint or port is left behind; the
// running service's close() is the same close, however often and by whomever it is called. Every runtime
// (the gateway, its event loops, the dashboard, the consumers, npm start's) starts through it, instead of
// each writing its own "close all if a step fails".

export class Resources {
  readonly #closes: Array<() => unknown> = [];
  #closing: Promise<void> | null = null;

  /**
   * Registers how to close `opened` (closed before what was registered earlier) and returns it, so that
   * opening and registering are one line: `const log = resources.add(await openRecordLog(…), (l) => l.close())`.
   */
  add<T>(opened: T, close: (opened: T) => unknown): T {
    this.defer(() => close(opened));
    return opened;
  }

  /** Registers a close step with nothing to hand back (stop a timer, flush counts, remove a file). */
  defer(close: () => unknown): void {
    if (this.#closing) throw new Error('these resources are closed: nothing can be added to them');
    this.#closes.push(close);
  }

  /**
   * Closes everything registered, the last first, each once. Every step runs even when one fails; the
   * first failure is thrown once all have run. Every call gets the same promise.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      let failure: { error: unknown } | null = null;
      for (const close of this.#closes.reverse()) {
        try {
          await close();
        } catch (error) {
          failure ??= { error };
        }
      }
      if (failure) throw failure.error;
    })();
    return this.#closing;
  }
}

/**
 * Runs a service's start with resources of its own. When a step throws, what the steps before it opened
 * is closed (in reverse, once) and the step's error is thrown, not a failure of the unwinding: that is
 * what a person needs to read. The start hands back what it built, with `resources.close` as its close.
 */
export async function startOrUnwind<T>(start: (resources: Resources) => Promise<T>): Promise<T> {
  const resources = new Resources();
  try {
    return await start(resources);
  } catch (error) {
    await resources.close().catch(() => {});
    throw error;
  }
}
