/**
 * A request id we accept from a client (`X-Request-Id`) and pass on (to the detection service as gRPC
 * metadata): 1 to 128 characters of letters, digits and `. _ : -`. Anything else is replaced by a UUID
 * (see create-app.ts), so the id is safe in a header, a log line and the audit trail.
 */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** The gRPC metadata key that carries the request id to the detection service. */
export const REQUEST_ID_METADATA_KEY = 'x-request-id';

/** `value` when it is a valid request id, else undefined. */
export function validRequestId(value: unknown): string | undefined {
  return typeof value === 'string' && REQUEST_ID_PATTERN.test(value) ? value : undefined;
}
