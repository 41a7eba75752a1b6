import type { ModerationCategory } from './taxonomy';
import { TriggerIndex } from './triggers';

/**
 * Lexicons for moderation categories whose defining trait is a small, describable set of phrasings, and
 * for which the training data has too few rows to learn it (harassment_threatening 26 rows,
 * hate_threatening 8, violence_graphic 6, self_harm_intent 2) or which must not be missed
 * (sexual_minors). Each entry gives a confidence floor to its category when it matches the prepared text
 * (text-prep.ts). Hand-written and deliberately narrow: they add recall on explicit wording; implicit
 * content is left to the models. Hit counts on the training split are in manifest.json → lexicons.
 */

export interface LexiconEntry {
  readonly id: string;
  readonly category: ModerationCategory;
  readonly pattern: RegExp;
  readonly floor: number;
  /** Speed only: substrings of which `pattern` needs one (triggers.ts; never changes the result). */
  readonly triggers?: readonly string[];
  /** Speed only: a further necessary condition checked before `pattern`. */
  readonly prefilter?: (prepared: string) => boolean;
}

const PEOPLE = String.raw`(?:you|u|ya|yo|him|her|them|your (?:family|kids?|wife|husband|mom|mother|dad|father|children))`;
const HARM = String.raw`(?:kill|murder|hurt|beat|stab|shoot|rape|strangle|choke|burn|slit|break|smash|cut|hunt|bury|end)`;
const GROUPS = String.raw`(?:jews?|jewish people|muslims?|arabs?|blacks?|black people|whites?|white people|gays?|lesbians?|homosexuals?|queers?|trans(?:gender)? people|immigrants?|migrants?|refugees?|mexicans?|latinos?|asians?|chinese|indians?|africans?|christians?|hindus?|sikhs?|women|feminists?|disabled people|retards?|n[i1]gg(?:er|a)s?|f[a4]gg?(?:ot)?s?|k[i1]kes?|sp[i1]cs?|ch[i1]nks?|wetbacks?|towelheads?)`;
const EXTERMINATE = String.raw`(?:kill|murder|exterminate|eradicate|wipe out|gas|lynch|hang|shoot|slaughter|massacre|ethnically cleanse|genocide|burn|behead|purge|get rid of|eliminate)`;
const MINOR = String.raw`(?:child|children|kids?|minors?|underage|under-age|preteens?|pre-teens?|prepubescent|toddlers?|infants?|(?:[4-9]|1[0-7])[- ]?(?:years?|yrs?)[- ]?olds?|schoolgirls?|schoolboys?|little (?:girls?|boys?)|young (?:girls?|boys?)|lolis?|lolita|shotas?|middle[- ]schoolers?|elementary[- ]schoolers?)`;
const SEXUAL = String.raw`(?:sex|sexual(?:ly)?|sexy|nude|nudes|naked|porn\w*|erotic\w*|explicit|molest\w*|fondl\w*|groom\w*|intercourse|orgasm\w*|masturbat\w*|aroused|seduc\w*|genitals?|penis|vagina|breasts?|lewd|nsfw|rape)`;

// A request to produce a drug or a weapon everyone recognises. The harm heads learn this from the wording of
// harmful requests, and everyday requests share that wording ("give me step-by-step instructions for making
// pancakes"): trained apart, "instructions for making methamphetamine" fell to 0.73, so the named object
// decides here. "bath bomb", "bomb-proof", "photo bomb", "bomb cake" and "crack the code" are not.
const PRODUCE = String.raw`(?:make|making|made|build|building|synthesi[sz]e|synthesi[sz]ing|cook|cooking|manufactur(?:e|ing)|produc(?:e|ing)|brew|brewing|assembl(?:e|ing)|extract|extracting|grow|growing|3d[- ]print(?:ing)?|print(?:ing)?)`;
const DRUGS = String.raw`(?:meth(?:amphetamine)?|crystal meth|fentanyl|heroin|cocaine|crack cocaine|crack rocks?|lsd|mdma|ecstasy|ghb|pcp|ketamine|dmt)`;
const WEAPONS = String.raw`(?:(?:pipe |nail |car |dirty |letter |fertili[sz]er |homemade |home-made |improvised )?(?<!bath |photo |seed |glitter |cake |stink |smoke |f-)bombs?(?![\w-]| (?:cake|dessert|shots?|drinks?|recipe|pops?))|explosives?|ieds?|napalm|thermite bomb|molotov(?: cocktails?)?|nerve (?:agent|gas)|sarin|vx|ricin|anthrax|mustard gas|chlorine gas|bioweapons?|chemical weapons?|ghost guns?|(?:gun |firearm )?silencers?|suppressors?|untraceable (?:gun|firearm)s?|zip guns?)`;
const REQUEST_TO = String.raw`(?:how (?:do|can|could|would|should) (?:i|you|we|one|someone) |how to |instructions? (?:for|on|to) |steps? (?:for|to) |tutorial (?:on|for) |guide (?:to|on|for) |recipe (?:for|to) |teach me (?:how )?to |explain how to |show me how to |help me )`;
const WORDS = String.raw`(?:[\w'-]+ ){0,3}`;
const PRODUCE_DRUG = new RegExp(String.raw`\b${REQUEST_TO}${WORDS}${PRODUCE} ${WORDS}${DRUGS}\b`);
const PRODUCE_WEAPON = new RegExp(String.raw`\b${REQUEST_TO}${WORDS}${PRODUCE} ${WORDS}${WEAPONS}`);

const MINOR_ANY = new RegExp(String.raw`\b${MINOR}\b`);
const SEXUAL_ANY = new RegExp(String.raw`\b${SEXUAL}\b`);

export const LEXICON: readonly LexiconEntry[] = [
  {
    id: 'threat_first_person',
    category: 'harassment_threatening',
    pattern: new RegExp(
      String.raw`\b(?:i(?:'m| am)? (?:going to|gonna|will|'ll)|i'll|imma|ima|we(?:'re| are)? (?:going to|gonna|will)|we'll)\s+(?:\S+\s+)?${HARM}\s+${PEOPLE}\b`,
    ),
    floor: 0.8,
    triggers: ['kill', 'murder', 'hurt', 'beat', 'stab', 'shoot', 'rape', 'strangle', 'choke', 'burn', 'slit', 'break', 'smash', 'cut', 'hunt', 'bury', 'end'],
  },
  {
    id: 'threat_you_will',
    category: 'harassment_threatening',
    pattern:
      /\byou(?:'re| are) (?:going to|gonna) (?:die|regret|pay|bleed|suffer)\b|\b(?:watch your back|i know where you live|you(?:'ll| will) (?:regret|pay for) (?:this|it|that)|you(?:'re| are) dead|(?:go )?kill yourself|\bkys\b)/,
    floor: 0.8,
    triggers: ['going to', 'gonna', 'watch your back', 'know where you live', 'regret', 'pay for', 'dead', 'kill yourself', 'kys'],
  },
  {
    id: 'hate_extermination',
    category: 'hate_threatening',
    pattern: new RegExp(
      String.raw`\b${EXTERMINATE}\s+(?:all\s+|every\s+|the\s+|those\s+|these\s+)*(?:\S+\s+)?${GROUPS}\b|\b${GROUPS}\s+(?:should|must|need to|deserve to|ought to)\s+(?:all\s+)?(?:die|be (?:killed|shot|exterminated|gassed|hanged|lynched|wiped out|eradicated|burned))\b`,
    ),
    floor: 0.8,
    triggers: ['kill', 'murder', 'extermin', 'eradicat', 'wipe out', 'gas', 'lynch', 'hang', 'shoot', 'slaughter', 'massacre', 'cleanse', 'genocide', 'burn', 'behead', 'purge', 'get rid of', 'eliminat', 'should', 'must', 'need to', 'deserve to', 'ought to'],
  },
  {
    id: 'gore',
    category: 'violence_graphic',
    pattern:
      /\b(?:gore|gory|disembowel\w*|dismember\w*|decapitat\w*|entrails|eviscerat\w*|flay(?:ed|ing)|skinned alive|mutilat\w*|severed (?:head|limb|arm|leg|hand|finger)s?|guts (?:spill\w*|hanging|out)|blood (?:spurt\w*|gush\w*|splatter\w*|everywhere|pour\w*)|brains? (?:splatter\w*|blown out|matter)|bones? (?:snap\w*|crunch\w*|protrud\w*)|gouged? out)\b/,
    floor: 0.6,
    triggers: ['gore', 'gory', 'disembowel', 'dismember', 'decapitat', 'entrails', 'eviscerat', 'flay', 'skinned alive', 'mutilat', 'severed', 'guts', 'blood', 'brain', 'bone', 'gouge'],
  },
  {
    // First person only: "thinking about suicide" alone is also a parent's or a teacher's question ("the warning
    // signs that a teenager is thinking about suicide"), which the classifier judges on its own.
    id: 'self_harm_first_person',
    category: 'self_harm_intent',
    pattern:
      /\bi(?:'m| am)? (?:want|wanna|going|gonna|plan|planning|intend|need|have decided|'ve decided|decided|am ready|'m ready|ready|will|'ll|about) (?:to )?(?:kill myself|die|end (?:it all|my life|things)|commit suicide|hurt myself|cut myself|harm myself|take my (?:own )?life|overdose|starve myself|jump off)\b|\bi (?:don't|do not) want to (?:live|be alive|exist) anymore\b|\b(?:my suicide note|goodbye cruel world|thinking (?:about|of) (?:killing myself|ending my life))\b|\bi(?:'m| am|'ve been| have been| keep| can't stop| cannot stop| started| was| been)(?: (?:really|seriously|constantly|always|often|still|just))? thinking (?:about|of) suicide\b/,
    floor: 0.85,
    triggers: ['kill myself', 'killing myself', 'die', 'end it all', 'my life', 'own life', 'end things', 'suicide', 'hurt myself', 'cut myself', 'harm myself', 'overdose', 'starve myself', 'jump off', 'anymore', 'goodbye cruel world'],
  },
  {
    // Co-occurrence in one clause: also matches sex education for children, hence only L3.
    id: 'minor_near_sexual',
    category: 'sexual_minors',
    pattern: new RegExp(String.raw`\b${MINOR}\b[^.!?\n]{0,60}\b${SEXUAL}\b|\b${SEXUAL}\b[^.!?\n]{0,60}\b${MINOR}\b`),
    floor: 0.55,
    triggers: ['sex', 'nude', 'naked', 'porn', 'erotic', 'explicit', 'molest', 'fondl', 'groom', 'intercourse', 'orgasm', 'masturbat', 'aroused', 'seduc', 'genital', 'penis', 'vagina', 'breast', 'lewd', 'nsfw', 'rape'],
    prefilter: (t) => MINOR_ANY.test(t) && SEXUAL_ANY.test(t),
  },
  {
    id: 'produce_drug',
    category: 'illicit',
    pattern: PRODUCE_DRUG,
    floor: 0.8,
    triggers: ['meth', 'fentanyl', 'heroin', 'cocaine', 'crack', 'lsd', 'mdma', 'ecstasy', 'ghb', 'pcp', 'ketamine', 'dmt'],
  },
  {
    id: 'produce_weapon',
    category: 'illicit_violent',
    pattern: PRODUCE_WEAPON,
    floor: 0.8,
    triggers: ['bomb', 'explosive', 'ied', 'napalm', 'molotov', 'nerve', 'sarin', 'vx', 'ricin', 'anthrax', 'gas', 'weapon', 'ghost gun', 'silencer', 'suppressor', 'untraceable', 'zip gun'],
  },
  {
    id: 'csam_terms',
    category: 'sexual_minors',
    pattern: /\b(?:csam|child porn\w*|kiddie porn|cp (?:links?|videos?|pics?)|pedo(?:phile|philia)? (?:porn|content|videos?|pics?))\b/,
    floor: 0.9,
    triggers: ['csam', 'porn', 'cp ', 'pedo'],
  },
];

const TRIGGERS = new TriggerIndex(LEXICON.flatMap((e) => e.triggers ?? []));

/** A trigger scan of the text that covers every lexicon trigger (window-features.ts shares one scan). */
export interface TriggerScan {
  index: TriggerIndex;
  present: ReadonlySet<string>;
}

/** Highest lexicon floor per category for prepared text, and which entries fired. */
export function evaluateLexicon(prepared: string, scan?: TriggerScan): { floors: Partial<Record<ModerationCategory, number>>; hits: string[] } {
  const floors: Partial<Record<ModerationCategory, number>> = {};
  const hits: string[] = [];
  const index = scan?.index ?? TRIGGERS;
  const present = scan?.present ?? TRIGGERS.scan(prepared);
  for (const entry of LEXICON) {
    if (entry.triggers && !index.anyPresent(present, entry.triggers)) continue;
    if (entry.prefilter && !entry.prefilter(prepared)) continue;
    if (!entry.pattern.test(prepared)) continue;
    hits.push(entry.id);
    floors[entry.category] = Math.max(floors[entry.category] ?? 0, entry.floor);
  }
  return { floors, hits };
}
