/**
 * The vocabulary of `Finding.signal`: what fired, as a stable id (never matched text).
 *
 *   classifier:<backend>   a classifier backend's model decided the score (classifier:builtin,
 *                          classifier:openai-moderation, classifier:builtin+http-classifier, ...)
 *   heuristic:<id>         a builtin heuristic or lexicon floor decided the score (heuristic:persona_dan)
 *   signature:<id>         a signature detector: its detector type (signature:pii/email), or the rule
 *                          inside it when it has several (signature:aws-access-key-id)
 *   deny_list              an entry of the policy's deny list
 *   custom:<name>          the policy's custom detector <name>
 *   suffix-perplexity      reserved: the adversarial-suffix signal
 */

export const DENY_LIST_SIGNAL = 'deny_list';
export const SUFFIX_PERPLEXITY_SIGNAL = 'suffix-perplexity';

export function signatureSignal(id: string): string {
  return `signature:${id}`;
}

/** `custom/<name>` (the category type) → `custom:<name>`. */
export function customSignal(type: string): string {
  return `custom:${type.startsWith('custom/') ? type.slice('custom/'.length) : type}`;
}
