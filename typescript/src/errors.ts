/**
 * The errors this package raises. None of them quotes a value it was given:
 * turn state, answers and tool results may hold secrets, and an error
 * message travels to logs and reports. They name the field and the rule
 * instead.
 */

const PLAIN_CODE = /^[A-Za-z0-9_:.-]{1,64}$/;

/**
 * The harness sent something this package cannot answer (not JSON, a
 * message out of place, a handshake without version 1). It ends the
 * session, as the protocol's `ProtocolViolation` does on the other side.
 */
export class ProtocolError extends Error {
  override readonly name = "ProtocolError";
}

/**
 * A record, request or message built by the deployment that the protocol
 * would refuse: caught in the deployment's own code, with a stack trace,
 * instead of as a protocol violation on the harness's side. `field` is the
 * place in the wire shape (a JSON pointer or a field name), never a value.
 */
export class RecordError extends TypeError {
  override readonly name = "RecordError";
  constructor(
    readonly field: string,
    rule: string,
  ) {
    super(`${field}: ${rule}`);
  }
}

/**
 * Throw from a turn to answer with a typed error a pack may expect.
 *
 * `kind` is compared exactly with a step's expected error (for example
 * `PauseTokenReplayedError`); `code` is an optional machine code (for example
 * `pause.replayed`) a step may match instead; `message` is for people and is
 * digested in reports.
 */
export class TurnFailure extends Error {
  override readonly name = "TurnFailure";
  readonly kind: string;
  readonly code: string | undefined;
  readonly detail: string;

  /**
   * `options.cause` is the error this one is thrown for: its trace (type
   * and frames, never its message) travels with the typed error.
   */
  constructor(kind: string, message = "", code?: string, options?: { cause?: unknown }) {
    if (typeof kind !== "string" || kind.length === 0) {
      throw new RecordError("kind", "an error kind is a non-empty string");
    }
    if (typeof message !== "string") {
      throw new RecordError("message", "an error message is a string");
    }
    if (code !== undefined && (typeof code !== "string" || !PLAIN_CODE.test(code))) {
      throw new RecordError(
        "code",
        "an error code is 1 to 64 letters, digits or _ : . - (it is printed in reports as it is)",
      );
    }
    super(`${kind}: ${message}`, options);
    this.kind = kind;
    this.detail = message;
    this.code = code;
  }

  /** The wire form of the error. */
  toJSON(): { kind: string; message: string; code?: string } {
    return this.code === undefined
      ? { kind: this.kind, message: this.detail }
      : { kind: this.kind, message: this.detail, code: this.code };
  }
}
