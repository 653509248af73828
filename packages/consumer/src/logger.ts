// The logging the consumers need (a pino logger fits): structured fields first, never a record's values.
export interface ConsumerLogger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
  error(object: object, message: string): void;
}
