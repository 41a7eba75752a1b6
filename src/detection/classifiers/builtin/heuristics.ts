import { squashText } from './text-prep';
import { LEXICON } from './lexicons';
import { TriggerHits, TriggerIndex } from './triggers';

/**
 * Transparent prompt-attack signals, combined with the trained model in two ways:
 *
 *   1. as model features: every signal that fires adds a dense feature (features.ts), whose weight the
 *      logistic regression learns from the data. Phrases that benign data also contains (system prompts
 *      that quote "ignore previous instructions" as an example of what to refuse, role-play requests
 *      saying "you are now a pirate") get a modest weight this way, instead of a hand-set one;
 *   2. as a floor: a few signals specific enough that they practically never occur in benign text give
 *      a minimum confidence per type: final score = max(calibrated model score, highest floor of the
 *      signals that fired). The floors are hand-set; the training script reports every signal's hit
 *      count on benign and attack rows of the training split (manifest.json → heuristics), which is how
 *      they were chosen: a floor at L2 (>= 0.75) only where benign hits are ~0 (persona_dan: 2 of 6,614
 *      benign rows); signals that benign system prompts also contain (the override phrase quoted as
 *      something to refuse, chat-template tokens) floor at L3 (0.55) only.
 *
 * All patterns run on prepared text (text-prep.ts: lower case, spaced-out letters joined) of the
 * engine's views (NFKC, invisible characters removed, confusables folded, base64/hex decoded), so casing,
 * spacing, homoglyph and encoding evasions reach them in plain form. `squashed` patterns run on the
 * letters-and-digits-only form (leetspeak mapped), which also defeats "i.g.n.o.r.e" or "ig-nore".
 * Every pattern is linear-time (no nested quantifiers over unbounded spans).
 */

export type AttackType = 'prompt_attack' | 'jailbreak';

export interface AttackSignal {
  readonly id: string;
  readonly family: 'override' | 'extraction' | 'persona' | 'delimiter' | 'encoding' | 'indirect';
  /** Matched on prepared text. */
  readonly pattern?: RegExp;
  /** Matched on squashed text. */
  readonly squashed?: RegExp;
  /** Minimum confidence per type when the signal fires (absent = feature only). */
  readonly floor?: Partial<Record<AttackType, number>>;
  /**
   * Speed only: substrings of which `pattern` needs at least one to match (a necessary condition, so
   * skipping the regex when none occurs never changes the result).
   */
  readonly triggers?: readonly string[];
  /**
   * Speed only: literals of which every match of `pattern` begins with one, at the match's index. The
   * pattern is then tried (sticky) only at the occurrences of these, in text order, instead of at every
   * position: the first that matches is the leftmost match, the same one exec() finds.
   */
  readonly starts?: readonly string[];
}

/** Not after a negation or a conditional ("never ignore your instructions", "if asked to ignore ..."). */
const GUARD = String.raw`(?<!(?:\b(?:not|never|if|refuse to|cannot|will not|asks? you to|tells? you to|told to|attempts? to|tries to|trying to|make you|get you to)|n't)\s{1,3}(?:\S+\s{1,3})?)`;
const OVERRIDE_VERB = String.raw`(?:ignore|disregard|forget|bypass|override|discard|abandon)`;
const PRIOR = String.raw`(?:previous|prior|above|earlier|preceding|former|initial|original|system|old|given|all|any|your|the|these|those|other)`;
const RULES = String.raw`(?:instructions?|rules|prompts?|directions?|guidelines?|constraints?|restrictions?|commands?|programming|directives?|context)`;

// The opening words of the signals whose every match starts with one of them: both their triggers and their starts.
const OVERRIDE_VERBS = ['ignore', 'disregard', 'forget', 'bypass', 'override', 'discard', 'abandon'];
const SHORT_OVERRIDE_VERBS = ['ignore', 'disregard', 'forget'];
const EXTRACTION_REQUEST_VERBS = ['repeat', 'print', 'output', 'reveal', 'show', 'display', 'tell me', 'write out', 'dump', 'leak', 'spell out', 'recite', 'echo', 'list'];
const EXTRACTION_VERBATIM_VERBS = ['repeat', 'print', 'output', 'reveal', 'show', 'display', 'write', 'recite', 'echo', 'spell', 'copy', 'tell', 'give', 'leak'];

export const ATTACK_SIGNALS: readonly AttackSignal[] = [
  {
    id: 'override_imperative',
    triggers: OVERRIDE_VERBS,
    starts: OVERRIDE_VERBS,
    family: 'override',
    pattern: new RegExp(`\\b(?=${OVERRIDE_VERB})${GUARD}${OVERRIDE_VERB}\\s+(?:\\S+\\s+){0,3}?${PRIOR}\\s+(?:\\S+\\s+){0,2}?${RULES}\\b`),
  },
  {
    id: 'override_phrase',
    family: 'override',
    squashed: /(?:ignore|disregard|forget)(?:all|any)?(?:of)?(?:the|your|my)?(?:previous|prior|above|preceding|earlier)(?:instructions?|rules|prompts?|directions)/,
    // 0.35% of benign training prompts quote it (system prompts naming the attack they refuse): L3 only.
    floor: { prompt_attack: 0.55 },
  },
  {
    // "disregard the above", "forget your rules": 4 of 6,614 benign training rows, 20 attacks.
    id: 'override_short',
    triggers: SHORT_OVERRIDE_VERBS,
    starts: SHORT_OVERRIDE_VERBS,
    family: 'override',
    pattern: new RegExp(
      String.raw`\b(?=ignore|disregard|forget)${GUARD}(?:ignore|disregard|forget)\s+(?:all\s+(?:of\s+)?)?(?:the|everything|anything)\s+(?:above|before|prior|previously|earlier|so far)\b` +
        String.raw`|\b(?=forget)${GUARD}forget\s+(?:all\s+)?(?:about\s+)?(?:your|the)\s+(?:rules|instructions|guidelines|training|programming|restrictions)\b`,
    ),
    floor: { prompt_attack: 0.8 },
  },
  {
    // "Ignore the previous instructions" in 16 other languages (de, fr, es, pt, it, nl, ru, zh, ja, ko, tr,
    // vi, id, hi, ar, bn, tl, th): the canonical override, which the English patterns and n-grams of a
    // mostly-English training set miss. Written from the phrase's usual translations, object words required
    // ("ignore les instructions", not "ignore"); Chinese needs "previous / above" (a defence saying "if the
    // user tells you to ignore these instructions" does not match). 0 of 11,085 benign training rows.
    id: 'override_multilingual',
    triggers: [
      'ignor', 'vergiss', 'vergessen', 'oubli', 'olvid', 'esquec', 'esqueç', 'dimentic', 'negeer', 'vergeet', 'игнор', 'забуд', 'проигнор',
      '忽略', '忘记', '忘掉', '无视', '忽視', '忘記', '無視', '忘れ', '무시', '잊어', 'yok say', 'görmezden', 'unut', 'bỏ qua', 'abaikan', 'lupakan',
      'अनदेखा', 'नज़रअंदाज़', 'नजरअंदाज', 'भूल जा', 'تجاهل', 'انس', 'উপেক্ষা', 'ভুলে', 'pansinin', 'kalimutan', 'ละเว้น', 'เพิกเฉย', 'ลืม',
    ],
    family: 'override',
    pattern: new RegExp(
      [
        String.raw`(?<!\p{L})(?:ignorier(?:e|en|t)?|vergiss|vergessen sie)(?!\p{L})[^.!?\n]{0,40}(?<!\p{L})(?:anweisungen|instruktionen|befehle|regeln|alles)(?!\p{L})`,
        String.raw`(?<!\p{L})(?:ignore[zr]?|oublie[zr]?)(?!\p{L})[^.!?\n]{0,25}(?<!\p{L})(?:les|tes|vos|toutes? les) (?:instructions|consignes|règles|directives)(?!\p{L})|(?<!\p{L})(?:ignorez|oubliez|oublie) tout(?!\p{L})`,
        String.raw`(?<!\p{L})(?:ignora|ignore|ignorad|ignoren|olvida|olvide|olvidad|olviden|esquece|esqueça|esqueçam)(?!\p{L})[^.!?\n]{0,25}(?<!\p{L})(?:las|sus|tus|as|suas|tuas) (?:instrucciones|indicaciones|reglas|instruções|regras|orientações)(?!\p{L})|(?<!\p{L})(?:olvida|olvide|ignora|esqueça|esquece|ignore) (?:todo lo|tudo o)(?!\p{L})`,
        String.raw`(?<!\p{L})(?:ignora|ignorate|dimentica|dimenticate|dimentichi)(?!\p{L})[^.!?\n]{0,40}(?<!\p{L})(?:istruzioni|indicazioni|regole|tutto ciò|tutto quello)(?!\p{L})`,
        String.raw`(?<!\p{L})(?:negeer|vergeet)(?!\p{L})[^.!?\n]{0,40}(?<!\p{L})(?:instructies|regels|alles)(?!\p{L})`,
        String.raw`(?:игнорируй|игнорируйте|забудь|забудьте|проигнорируй)[^.!?\n]{0,40}(?:инструкци|указани|правил|всё|все,? что)`,
        String.raw`(?:忽略|忘记|忘掉|无视|忽視|忘記)(?:之前|以上|前面|先前|上述|此前|所有之前|以前)[^。！？\n]{0,8}(?:指令|指示|说明|說明|规则|規則|提示)`,
        String.raw`(?:以前|これまで|上記|前|事前)の[^。！？\n]{0,8}(?:指示|命令|ルール)[^。！？\n]{0,6}(?:無視|忘れ)`,
        String.raw`(?:이전|위의|앞의)[^.!?\n]{0,8}(?:지시|지침|명령|규칙)[^.!?\n]{0,6}(?:무시|잊어)`,
        String.raw`(?<!\p{L})(?:önceki|tüm) [^.!?\n]{0,20}(?:talimatları|kuralları)[^.!?\n]{0,10}(?:yok say|görmezden gel|unut)`,
        String.raw`(?<!\p{L})bỏ qua(?!\p{L})[^.!?\n]{0,30}(?:hướng dẫn|chỉ dẫn|chỉ thị)[^.!?\n]{0,15}(?:trước|ở trên)`,
        String.raw`(?<!\p{L})(?:abaikan|lupakan)(?!\p{L})[^.!?\n]{0,30}(?<!\p{L})(?:instruksi|petunjuk|perintah|aturan)(?!\p{L})`,
        String.raw`(?:पिछले|पहले के|ऊपर के)[^।!?\n]{0,20}(?:निर्देशों|निर्देश|नियमों)[^।!?\n]{0,20}(?:अनदेखा|नज़रअंदाज़|नजरअंदाज|भूल जा)`,
        String.raw`(?:تجاهل|انسَ|انس)[^.!?\n]{0,30}(?:التعليمات|الإرشادات|القواعد) ?(?:السابقة|أعلاه)`,
        String.raw`(?:আগের|পূর্ববর্তী)[^।!?\n]{0,20}(?:নির্দেশ|নির্দেশনা)[^।!?\n]{0,20}(?:উপেক্ষা|ভুলে)`,
        String.raw`(?<!\p{L})(?:huwag pansinin|kalimutan)(?!\p{L})[^.!?\n]{0,30}(?:mga (?:naunang |nakaraang )?tagubilin)`,
        String.raw`(?:ละเว้น|เพิกเฉย|ลืม)[^\n]{0,20}(?:คำสั่ง|คำแนะนำ)[^\n]{0,10}(?:ก่อนหน้า|ข้างต้น)`,
      ].join('|'),
      'u',
    ),
    floor: { prompt_attack: 0.8 },
  },
  {
    id: 'override_new_instructions',
    triggers: ['instruction', 'task', 'rule', 'system prompt', 'directive', 'from now on'],
    family: 'override',
    pattern: /\b(?:new|updated|real|actual|revised|additional) (?:instructions?|task|rules|system prompt|directive)s?\s*:|\bfrom now on,? (?:you (?:will|must|are|shall|should)|your (?:only )?(?:task|job|goal))\b/,
  },
  {
    id: 'extraction_request',
    triggers: EXTRACTION_REQUEST_VERBS,
    starts: EXTRACTION_REQUEST_VERBS,
    family: 'extraction',
    pattern:
      /\b(?:repeat|print|output|reveal|show|display|tell me|write out|dump|leak|spell out|recite|echo|list)\b(?:\s+\S+){0,4}?\s+(?:your (?:system |initial |original |hidden |secret )?(?:prompt|instructions|rules|directives|guidelines)|(?:the |your )?(?:system|initial|original|hidden|secret|pre-?) ?prompt|(?:the |all )?(?:text|words|instructions|everything|content) (?:above|before this|preceding))/,
  },
  {
    id: 'extraction_question',
    triggers: ['what'],
    family: 'extraction',
    pattern: /\bwhat (?:is|are|was|were) (?:your|the) (?:system prompt|initial (?:prompt|instructions)|original instructions|hidden instructions|secret (?:password|instructions|prompt))\b/,
  },
  { id: 'mention_system_prompt', triggers: ['system prompt', 'preprompt', 'pre-prompt', 'initial prompt'], family: 'extraction', pattern: /\b(?:system prompt|pre-?prompt|initial prompt)\b/ },
  {
    // Narrow: asks for the prompt / the text above verbatim. 10 of 6,614 benign training rows (all Tensor
    // Trust defences quoting it), so it floors at L2 for what the model cannot learn (3 extraction attacks).
    id: 'extraction_verbatim',
    triggers: EXTRACTION_VERBATIM_VERBS,
    starts: EXTRACTION_VERBATIM_VERBS,
    family: 'extraction',
    pattern: new RegExp(
      String.raw`\b(?=repeat|print|output|reveal|show|display|write|recite|echo|spell|copy|tell|give|leak)${GUARD}` +
        String.raw`(?:(?:repeat|print|output|reveal|show|display|write out|recite|echo|spell out|copy)\b[^.\n]{0,60}?\b(?:system prompt|initial (?:prompt|instructions)|hidden (?:prompt|instructions)|(?:text|words|instructions|prompt|everything|content|message) (?:above|before this))\b` +
        String.raw`|(?:repeat|print|output|reveal|show|display|write out|recite|echo|spell out|copy)\b[^.\n]{0,80}?\b(?:verbatim|word for word|word-for-word)\b` +
        String.raw`|(?:reveal|print|show|output|repeat|tell me|give me|leak|display)\s+(?:me\s+)?(?:your|the)\s+(?:system prompt|initial instructions|original instructions|hidden instructions|secret instructions))`,
    ),
    floor: { prompt_attack: 0.8 },
  },
  { id: 'persona_dan', triggers: ['do anything now', 'dan'], family: 'persona', pattern: /\bdo anything now\b|\bdan mode\b|\bdan\b[^\n]{0,60}\b(?:jailbreak|no restrictions|any ?thing now)\b/, floor: { jailbreak: 0.8, prompt_attack: 0.8 } },
  {
    id: 'persona_developer_mode',
    triggers: ['mode'],
    family: 'persona',
    pattern: /\b(?:developer|dev|god|debug|unrestricted|jailbreak|evil|chaos|opposite) mode\b/,
  },
  { id: 'persona_jailbroken', triggers: ['jailbr'], family: 'persona', pattern: /\bjailbr(?:oken|eaks?|eaking)\b/ },
  {
    id: 'persona_you_are_now',
    triggers: ['you are', 'pretend', 'from now on'],
    family: 'persona',
    pattern: /\byou are (?:now|going to (?:act|pretend|be|play))\b|\bpretend (?:to be|you are|that you are)\b|\bfrom now on,? you\b/,
  },
  { id: 'persona_stay_in_character', triggers: ['character'], family: 'persona', pattern: /\b(?:stay|remain|keep|staying) in character\b|\bbreak(?:ing)? character\b/ },
  {
    id: 'persona_no_limits',
    triggers: ['rules', 'restriction', 'limit', 'filter', 'censor', 'guideline', 'ethic', 'moral', 'boundar'],
    family: 'persona',
    pattern:
      /\b(?:no|without(?: any)?|free (?:of|from)|not bound by|break free of|does not have|doesn't have|don't have|do not have|zero|never follows?) (?:\S+ )?(?:rules|restrictions|limitations|limits|filters|filtering|censorship|guidelines|ethics|morals|boundaries)\b/,
  },
  {
    id: 'persona_policy_evasion',
    triggers: ['polic', 'guideline', 'filter', 'uncensored', 'amoral', 'unethical', 'immoral'],
    family: 'persona',
    pattern:
      /\b(?:openai|anthropic|content|safety|usage) (?:content )?(?:polic(?:y|ies)|guidelines|filters?)\b|\b(?:unfiltered|uncensored|amoral|unethical|immoral) (?:ai|assistant|chatbot|model|response|version|character)\b/,
  },
  {
    id: 'persona_dual_response',
    triggers: ['response', 'answer', 'paragraph', 'output', 'classic', 'jailbreak', 'normal'],
    family: 'persona',
    pattern: /\b(?:two|2) (?:different |separate )?(?:responses|answers|paragraphs|outputs)\b|\[(?:🔒|🔓)?\s?(?:classic|jailbreak|normal|developer mode output)\]/,
  },
  {
    id: 'persona_named_jailbreak',
    triggers: ['dan', 'mongo tom', 'stan', 'dude', 'aim', 'evil', 'ucar', 'apophis', 'omega', 'kevin', 'niccolo', 'machiavelli'],
    starts: ['betterdan', 'anti', 'mongo tom', 'stan', 'dude', 'aim', 'evil', 'ucar', 'apophis', 'omega', 'kevin', 'niccolo', 'machiavelli'],
    family: 'persona',
    pattern: /\b(?:betterdan|anti-?dan|mongo tom|stan|dude|aim|evil-?bot|ucar|apophis|omega|kevin|niccolo|machiavelli)\b[^\n]{0,80}\b(?:character|persona|roleplay|role-play|respond|answer|ai|chatbot)\b/,
  },
  {
    // Fiction / hypothetical / role-play framing. Benign requests use it all the time ("write a story
    // about a dragon"), so it is a feature and, with a harmful request, the stacking signal of
    // builtin-model.ts (a harmful request inside a story is a jailbreak); it never floors a score alone.
    // "science fiction" is a genre ("which science-fiction books would you recommend?"), not a framing: a
    // request set in it names the story, novel or scene as well.
    id: 'framing_fiction',
    triggers: ['hypothetic', 'imagine', 'pretend', 'role', 'story', 'fiction', 'screenplay', 'novel', 'character', 'play', 'alternate', 'thought experiment', 'act as', 'acting as', 'villain', 'movie', 'dialogue', 'scene', 'grandm', 'parallel universe', 'fantasy', 'script'],
    family: 'persona',
    pattern:
      /\b(?:hypothetical(?:ly)?|imagine|pretend|role-?play(?:ing)?|fictional|(?<!science[- ])fiction|(?:short )?story|screenplay|novel|in character|alternate (?:universe|world|reality|timeline)|parallel universe|thought experiment|(?:act|acting|behave) as|play(?:ing)? (?:the )?(?:role|part|game)|let'?s play|villain|movie|dialogue|scene|grandm(?:a|other)|fantasy (?:world|setting)|script)\b/,
  },
  {
    // Refusal suppression / output forcing (DSN-style suffixes): "start your reply with 'Sure, here is'",
    // "do not apologize", "no warnings or disclaimers", "you cannot say no".
    id: 'framing_refusal_suppression',
    triggers: ['refus', 'apolog', 'disclaimer', 'warning', 'start your', 'begin your', 'sure, here', 'sure here', 'say no', 'hold back', 'hesitat', 'censor', 'unfiltered', 'no matter what', 'educational purposes', 'research purposes', 'without any', 'never mention', 'do not mention', "don't mention", 'skip any', 'cannot help', "can't help", 'guidelines'],
    family: 'persona',
    pattern:
      /\b(?:never|do not|don't|dont|must not|cannot|can't|not allowed to|without|no) (?:\S+ ){0,2}?(?:refus(?:e|al|als|ing)|apologi[sz](?:e|ing|ies)|apologies|disclaimers?|warnings?|safety notes?|hesitat(?:e|ion)|hold(?:ing)? back|say(?:ing)? no|moraliz(?:e|ing)|lectur(?:e|ing)|ethics|censorship)\b|\b(?:start|begin|prefix|open) (?:your |the )?(?:reply|response|answer|output)? ?with ["'“]?(?:sure|absolutely|of course|certainly|here)\b|\bsure,? here (?:is|are)\b|\b(?:uncensored|unfiltered) (?:output|answer|response|reply)s?\b|\bfor (?:purely )?(?:educational|research|academic) purposes(?: only)?\b|\bno matter (?:what|how (?:harmful|dangerous|illegal|unethical))\b|\b(?:ignore|ignoring|bypass|forget) (?:your|the|all) (?:\S+ )?(?:ethics|guidelines|content (?:rules|polic(?:y|ies))|safety (?:rules|guidelines))\b|\bskip (?:any|all|the) (?:safety|ethical|moral)\b/,
  },
  {
    id: 'delimiter_chat_template',
    triggers: ['<|', 'inst]', 'sys>>'],
    family: 'delimiter',
    pattern: /<\|(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id)\|>|\[\/?inst\]|<<\/?sys>>/,
    // Tensor Trust defences (benign system prompts) use these tokens too (1.3% of benign training rows): L3 only.
    floor: { prompt_attack: 0.55 },
  },
  {
    // A fake system turn in chat-template syntax. 11 of 6,614 benign training rows (Tensor Trust defences
    // written in that syntax); in user content it is role injection, so it floors at L2.
    id: 'delimiter_system_role',
    triggers: ['<|', 'sys>>'],
    family: 'delimiter',
    pattern: /<\|im_start\|>\s*system|<\|system\|>|<<sys>>|<\|start_header_id\|>\s*system/,
    floor: { prompt_attack: 0.8 },
  },
  {
    id: 'delimiter_role_header',
    triggers: ['##', ':'],
    family: 'delimiter',
    pattern: /(?:^|\n)\s*#{2,}\s*(?:system|instructions?|new instructions?|admin|developer|assistant)\b|(?:^|\n)\s*(?:system|assistant|human|ai)\s*:\s*\S/,
  },
  {
    id: 'delimiter_fake_tag',
    triggers: ['<'],
    family: 'delimiter',
    pattern: /<\/?(?:user|system|assistant|instructions?|system_prompt|user_input|admin)>/,
  },
  {
    id: 'delimiter_boundary',
    triggers: ['end', 'begin', 'start'],
    family: 'delimiter',
    pattern: /\b(?:end|begin|start) (?:of )?(?:the )?(?:user input|system prompt|instructions|prompt|conversation|document|context|simulation)\b/,
  },
  {
    // Indirect injection (BIPIA-style): a directive about the assistant's own reply, typically planted in
    // an e-mail, a table or a web page the assistant is asked to process. Feature only (system prompts
    // say this too); as a signal it also gives the attack heads a focus around it (window-features.ts),
    // so the planted sentence is scored without the document around it.
    id: 'indirect_reply_directive',
    triggers: ['your response', 'your answer', 'your reply', 'your responses', 'your answers', 'your replies', 'your output', 'your summary', 'your message'],
    family: 'indirect',
    pattern:
      /\b(?:in|to|at the (?:end|beginning|start) of|within|throughout|before|after|into) your (?:response|answer|reply|responses|answers|replies|output|summary|message)\b/,
  },
  {
    // Indirect injection in code context: a snippet that runs downloaded code, exfiltrates the environment
    // or opens a shell. Feature only (the model learns its weight), with a focus like every signal.
    id: 'indirect_code_payload',
    triggers: ['exec(', 'eval(', 'os.environ', 'requests.', 'urlopen(', 'subprocess.', 'os.system(', 'socket.socket(', 'keylogger', 'reverse shell', '/etc/passwd'],
    family: 'indirect',
    pattern: /\bexec\(|\beval\(|\bos\.environ\b|\brequests\.(?:post|get)\(|\burlopen\(|\bsubprocess\.|\bos\.system\(|\bsocket\.socket\(|\bkeylogger\b|\breverse shell\b|\/etc\/passwd\b/,
  },
  {
    id: 'encoding_request',
    triggers: ['base64', 'rot13', 'rot-13', 'hex', 'binary', 'morse', 'caesar'],
    family: 'encoding',
    pattern: /\b(?:decode|decrypt|deobfuscate|translate|execute|follow)\b(?:\s+\S+){0,3}?\s+(?:base64|rot13|rot-13|hex|binary|morse|caesar)\b|\b(?:base64|rot13|hex)[- ](?:encoded|decoded?)\b/,
  },
];

/**
 * One trigger index for the attack signals AND the lexicons (lexicons.ts): window-features.ts scans a
 * window once and hands the result to both (one pass over the text instead of two).
 */
export const TRIGGERS = new TriggerIndex(
  [...ATTACK_SIGNALS.flatMap((s) => s.triggers ?? []), ...LEXICON.flatMap((e) => e.triggers ?? [])],
  ATTACK_SIGNALS.flatMap((s) => s.starts ?? []),
);

export interface SignalHits {
  /** Indices into ATTACK_SIGNALS of the signals that fired. */
  readonly hits: number[];
  /** Where the first signal (in ATTACK_SIGNALS order) that fired by `pattern` matched: [start, end). */
  readonly at?: readonly [number, number];
  /** Highest floor per type among the signals that fired (0 when none). */
  readonly floor: Record<AttackType, number>;
}

/** Evaluates every signal on prepared text (text-prep.ts); `present` = TRIGGERS.scan(prepared) when already done. */
export function evaluateSignals(prepared: string, present: ReadonlySet<string> = TRIGGERS.scan(prepared)): SignalHits {
  const hits: number[] = [];
  const floor: Record<AttackType, number> = { prompt_attack: 0, jailbreak: 0 };
  let squashed: string | undefined;
  let at: [number, number] | undefined;
  ATTACK_SIGNALS.forEach((signal, i) => {
    const skip = signal.triggers !== undefined && !TRIGGERS.anyPresent(present, signal.triggers);
    const m = signal.pattern && !skip ? execSignal(signal, prepared, present) : null;
    if (m && !at) at = [m.index, m.index + m[0].length];
    let fired = m !== null;
    if (!fired && signal.squashed) {
      squashed ??= squashText(prepared);
      fired = signal.squashed.test(squashed);
    }
    if (!fired) return;
    hits.push(i);
    if (signal.floor?.prompt_attack) floor.prompt_attack = Math.max(floor.prompt_attack, signal.floor.prompt_attack);
    if (signal.floor?.jailbreak) floor.jailbreak = Math.max(floor.jailbreak, signal.floor.jailbreak);
  });
  return at ? { hits, floor, at } : { hits, floor };
}

const STICKY = new Map<AttackSignal, RegExp>(
  ATTACK_SIGNALS.filter((s) => s.pattern && s.starts).map((s) => [s, new RegExp((s.pattern as RegExp).source, `${(s.pattern as RegExp).flags}y`)]),
);

/**
 * signal.pattern.exec(prepared), tried only where a match can start when the signal lists `starts` (their
 * occurrences come from the trigger scan when it recorded them, else from indexOf).
 */
export function execSignal(signal: AttackSignal, prepared: string, present?: ReadonlySet<string>): RegExpExecArray | null {
  const sticky = STICKY.get(signal);
  if (!sticky || !signal.starts) return signal.pattern ? signal.pattern.exec(prepared) : null;
  const positions: number[] = [];
  // A TRIGGERS scan reports exactly the triggers that occur (starts included) and every position of the starts.
  const scanned = present instanceof TriggerHits && present.index === TRIGGERS ? present : undefined;
  for (const s of signal.starts) {
    if (scanned && !scanned.has(s)) continue;
    const at = scanned?.positions.get(s);
    if (at) for (const p of at) positions.push(p);
    else for (let p = prepared.indexOf(s); p >= 0; p = prepared.indexOf(s, p + 1)) positions.push(p);
  }
  if (positions.length === 0) return null;
  positions.sort((a, b) => a - b);
  let last = -1;
  for (const p of positions) {
    if (p === last) continue;
    last = p;
    sticky.lastIndex = p;
    const m = sticky.exec(prepared);
    if (m) return m;
  }
  return null;
}
