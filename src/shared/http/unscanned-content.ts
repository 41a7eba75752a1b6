import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors';
import type { PolicyMode, Unscannable } from '../policy';

/** Characters of path list in X-Risk-Unscanned-Content (whole paths, then `+N` for the ones left out). */
export const UNSCANNED_HEADER_MAX_CHARS = 2048;
/** Characters of path list kept in the audit event's unscanned_content (same rule). */
export const UNSCANNED_AUDIT_MAX_CHARS = 8192;

/**
 * Whole paths, in request order, while their comma-joined length stays within `maxChars`; when some
 * are left out, a last element `+N` says how many.
 */
export function boundedPaths(paths: readonly string[], maxChars: number): string[] {
  const out: string[] = [];
  let used = 0;
  for (let i = 0; i < paths.length; i++) {
    const path = paths[i] as string;
    const marker = `+${paths.length - i - 1}`;
    // Room for this path and, unless it is the last, a marker after it.
    const need = used + (out.length > 0 ? 1 : 0) + path.length + (i < paths.length - 1 ? marker.length + 1 : 0);
    if (need > maxChars) {
      out.push(`+${paths.length - i}`);
      return out;
    }
    used += (out.length > 0 ? 1 : 0) + path.length;
    out.push(path);
  }
  return out;
}

/**
 * Request content no detector could read (images, audio, PDFs, file references): its JSON paths go to
 * the audit event (unscanned_content) and the X-Risk-Unscanned-Content header. When the policy's
 * unscannable mode is `block`, returns the refusal (403, code unscannable_content) in the route's error
 * type, `security_block` (chat completions) or `permission_error` (sensor), for the route to throw
 * (after a detector's block, which takes precedence); null otherwise. Nothing is noted when the policy
 * does not scan input (policy_mode O).
 */
export function noteUnscannedContent(
  request: FastifyRequest,
  reply: FastifyReply,
  paths: readonly string[],
  policy: { detection: { policyMode: PolicyMode }; unscannable: Unscannable },
  errorType: 'security_block' | 'permission_error',
): AppError | null {
  if (paths.length === 0 || policy.detection.policyMode === 'O') return null;
  request.audit ??= {};
  request.audit.unscannedContent = boundedPaths(paths, UNSCANNED_AUDIT_MAX_CHARS);
  const listed = boundedPaths(paths, UNSCANNED_HEADER_MAX_CHARS);
  void reply.header('x-risk-unscanned-content', listed.join(','));
  if (policy.unscannable !== 'block') return null;
  request.audit.blocked = true;
  void reply.header('x-risk-blocked', 'true');
  const first = paths.slice(0, 3).join(', ') + (paths.length > 3 ? `, and ${paths.length - 3} more` : '');
  return new AppError(
    errorType,
    `The request was blocked by the security policy: it holds content no detector can read (${first}); the policy blocks unscannable content`,
    { code: 'unscannable_content', details: { unscanned_content: listed } },
  );
}
