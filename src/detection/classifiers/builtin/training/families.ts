import type { Row } from './dataset';

/**
 * Source families of the injection data and the benign groups the evaluation reports false positives on.
 * A family is the rows of one origin (all `tensortrust_*`, all `cyberseceval_*`, ...): the
 * leave-one-family-out evaluation trains without a family and tests its attacks, so it measures how the
 * model does on attacks of a source it has never seen (the way users meet it), not how well it fits a
 * random split of sources it knows.
 */

export interface SourceFamily {
  name: string;
  /** What its attacks are, for the report. */
  description: string;
  match: RegExp;
}

export const SOURCE_FAMILIES: readonly SourceFamily[] = [
  { name: 'verazuo_jailbreak', description: 'in-the-wild jailbreak prompts (DAN, personas, role-play)', match: /^verazuo_jailbreak$/ },
  { name: 'tensortrust', description: 'prompt-extraction / hijacking game moves ("say access granted")', match: /^tensortrust_/ },
  { name: 'cyberseceval', description: 'short direct and indirect injections, 17 languages', match: /^cyberseceval_/ },
  { name: 'bipia', description: 'indirect injections inside e-mails, tables and code', match: /^bipia_/ },
  { name: 'deepset', description: 'short direct injections, English and German', match: /^deepset_/ },
  { name: 'injecagent', description: 'injected instructions inside tool outputs', match: /^injecagent_/ },
  { name: 'garak', description: 'system-prompt extraction attacks', match: /^garak_/ },
];

export function familyOf(source: string): string | undefined {
  return SOURCE_FAMILIES.find((f) => f.match.test(source))?.name;
}

/**
 * Benign groups of the injection file. "ordinary": what people ask an assistant (maths, code, writing,
 * role-play requests). "injection-looking": benign texts that talk about instructions, passwords, secrets
 * and system prompts, or are the data an indirect injection hides in (e-mails, tables, tool results).
 */
export type BenignGroup = 'ordinary' | 'injection-looking';

const ORDINARY = /^(gsm8k_train|gpteacher_codegen|gpteacher_roleplay|awesome_chatgpt_prompts|deepset_train)$/;
const INJECTION_LOOKING = /^(wildguard_benign|cyberseceval_sysprompt|cyberseceval_frr|tensortrust_defense|bipia_train_context|injecagent_context)$/;

export function benignGroupOf(row: Pick<Row, 'file' | 'labels' | 'source'>): BenignGroup | undefined {
  if (row.file !== 'injection' || row.labels.length > 0) return undefined;
  if (ORDINARY.test(row.source)) return 'ordinary';
  if (INJECTION_LOOKING.test(row.source)) return 'injection-looking';
  return undefined;
}
