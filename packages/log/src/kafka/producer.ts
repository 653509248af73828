// The Kafka log's appends: messages wait up to a linger (a few milliseconds) so that concurrent requests
// share one produce request, a full batch goes at once, and appends beyond a bound of messages waiting for
// the brokers are refused at once (the gateway answers 503) instead of queueing without limit. The send
// itself is injected (kafkajs's producer.sendBatch in production), so this logic has unit tests without a
// broker.
import { LogUnavailableError } from '../record-log.ts';

export interface OutgoingMessage {
  topic: string;
  key: string | null;
  value: Buffer | null;
}

/** Sends messages grouped by topic in one produce request; resolves once the brokers acknowledged them. */
export type SendBatch = (
  topicMessages: Array<{ topic: string; messages: Array<{ key: string | null; value: Buffer | null }> }>,
) => Promise<unknown>;

export interface LingerBatcherOptions {
  /** How long a message waits for others to share its produce request. */
  lingerMs: number;
  /** A batch this large is sent at once, without waiting for the linger. */
  maxBatchRecords?: number;
  /** Messages waiting for the brokers beyond this are refused at once. */
  maxPendingRecords?: number;
  /** Told when a produce request fails (its messages' senders get LogUnavailableError). */
  onSendFailed?: (error: unknown) => void;
}

interface Pending {
  message: OutgoingMessage;
  resolve(): void;
  reject(error: unknown): void;
}

export class LingerBatcher {
  readonly #send: SendBatch;
  readonly #lingerMs: number;
  readonly #maxBatch: number;
  readonly #maxPending: number;
  readonly #onSendFailed: ((error: unknown) => void) | undefined;
  #batch: Pending[] = [];
  #timer: NodeJS.Timeout | null = null;
  readonly #inFlight = new Set<Promise<void>>();
  #pending = 0;
  #lastSendFailed = false;

  constructor(send: SendBatch, options: LingerBatcherOptions) {
    this.#send = send;
    this.#lingerMs = options.lingerMs;
    this.#maxBatch = options.maxBatchRecords ?? 1000;
    this.#maxPending = options.maxPendingRecords ?? 10_000;
    this.#onSendFailed = options.onSendFailed;
  }

  /** Whether the last produce request failed (until one succeeds). */
  get lastSendFailed(): boolean {
    return this.#lastSendFailed;
  }

  /** Produce requests sent and not answered yet. */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** Messages waiting for the brokers now (queued or in flight). */
  get pending(): number {
    return this.#pending;
  }

  /** Sends messages; resolves once the brokers acknowledged every one, rejects with LogUnavailableError. */
  async send(messages: readonly OutgoingMessage[]): Promise<void> {
    if (this.#pending + messages.length > this.#maxPending) {
      throw new LogUnavailableError(`more than ${this.#maxPending} records are waiting for Kafka`);
    }
    this.#pending += messages.length;
    try {
      await Promise.all(
        messages.map(
          (message) =>
            new Promise<void>((resolve, reject) => {
              this.#batch.push({ message, resolve, reject });
              if (this.#batch.length >= this.#maxBatch) {
                if (this.#timer) clearTimeout(this.#timer);
                void this.flush();
              } else {
                this.#timer ??= setTimeout(() => this.flush(), this.#lingerMs);
              }
            }),
        ),
      );
    } finally {
      this.#pending -= messages.length;
    }
  }

  /** Sends what is gathered now, in one produce request. */
  flush(): Promise<void> {
    this.#timer = null;
    const batch = this.#batch;
    this.#batch = [];
    if (batch.length === 0) return Promise.resolve();
    const byTopic = new Map<string, Array<{ key: string | null; value: Buffer | null }>>();
    for (const { message } of batch) {
      const messages = byTopic.get(message.topic);
      const entry = { key: message.key, value: message.value };
      if (messages) messages.push(entry);
      else byTopic.set(message.topic, [entry]);
    }
    const sending = this.#send([...byTopic].map(([topic, messages]) => ({ topic, messages }))).then(
      () => {
        this.#lastSendFailed = false;
        for (const pending of batch) pending.resolve();
      },
      (error: unknown) => {
        this.#lastSendFailed = true;
        this.#onSendFailed?.(error);
        const failure = new LogUnavailableError('Kafka did not acknowledge the records', { cause: error });
        for (const pending of batch) pending.reject(failure);
      },
    );
    this.#inFlight.add(sending);
    sending.finally(() => this.#inFlight.delete(sending));
    return sending;
  }

  /** Sends what is gathered and waits for every produce request in flight. */
  async close(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    await this.flush();
    await Promise.allSettled([...this.#inFlight]);
  }
}
