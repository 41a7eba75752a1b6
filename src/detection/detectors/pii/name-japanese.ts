import type { DetectorFinding } from '../../detector';

/**
 * Japanese personal names for pii/name. Japanese is written without spaces and names are not
 * capitalised, so the evidence is the honorific after a name, a naming label before it, and the most
 * common surnames:
 *   - a run of 2-6 kanji (or 2-8 katakana: foreign names), optionally split once by a space, followed by
 *     さん / 様 / さま / 氏 / 殿 / 先生 / くん / 君 / ちゃん                                    0.85
 *     (not the words that take 様 or さん without being names: お客様, 皆様, 仕様, 模様, 同様 …)
 *   - after 氏名 / 名前 / 担当 / 差出人 with ":", "：", "は" or "が"                          0.85
 *   - a common surname (SURNAMES) + a space + 1-3 kanji ("佐藤 花子"), or any such spaced pair
 *     followed by です / と申します                                                                 0.8
 *   - another spaced pair of 1-3 + 1-3 kanji                                                      0.7
 *   - a common surname glued to 1-2 kanji at a boundary ("鈴木一郎"), not a place
 *     (…市, …区, …駅)                                                                           0.75
 * SURNAMES: about a hundred of the most frequent surnames of Japan (general knowledge of the national
 * frequency rankings), written here by hand.
 */

const SURNAMES = new Set(
  (
    '佐藤 鈴木 高橋 田中 伊藤 渡辺 渡邊 山本 中村 小林 加藤 吉田 山田 佐々木 山口 松本 井上 木村 林 斎藤 斉藤 清水 山崎 森 池田 橋本 ' +
    '阿部 石川 山下 中島 石井 小川 前田 岡田 長谷川 藤田 後藤 近藤 村上 遠藤 青木 坂本 福田 太田 西村 藤井 金子 岡本 藤原 中野 ' +
    '三浦 原田 中川 松田 竹内 小野 田村 中山 和田 石田 森田 上田 原 内田 柴田 酒井 宮崎 横山 高木 安藤 宮本 大野 小島 谷口 今井 ' +
    '工藤 高田 増田 丸山 杉山 村田 大塚 新井 小山 平野 藤本 河野 上野 野口 武田 松井 千葉 岩崎 菅原 木下 久保 佐野 野村 松尾 ' +
    '市川 菊地 杉本 古川 大西 島田 水野 桜井 高野 渡部 吉川 山内 西田 飯田 菅野 服部'
  ).split(' '),
);

const HONORIFIC = /^(?:さん|様|さま|氏|殿|先生|くん|君|ちゃん)/;
/** Words that take 様 / さん / 殿 and are no names (customer, everyone, god, specification, pattern, …). */
const NOT_NAMES = new Set(['客', 'お客', '皆', '神', '王', '奥', '仕', '模', '同', '多', '異', '一', '外', '今', '文', '態', '殿', '旦那', '王子', '姫', '皆々', '先', '方']);
const PLACE_END = /[都道府県市区町村郡駅線丁目番号館店社部課局]$/;
const SELF_INTRO_AFTER = /^(?:です|と申します|と言います|でございます)/;
const LABEL_BEFORE = /(?:氏名|名前|お名前|担当者?|差出人|宛名|契約者)(?:[:：]|は|が)[ \u3000]?$/;

const isHan = (c: number) => (c >= 0x4e00 && c <= 0x9fff) || (c >= 0x3400 && c <= 0x4dbf) || c === 0x3005; // 々
const isKatakana = (c: number) => (c >= 0x30a1 && c <= 0x30fa) || c === 0x30fc || c === 0x30fb;

/** A text worth the Japanese pass: it holds kanji or kana. */
export const HAS_JAPANESE = /[\u3040-\u30ff\u4e00-\u9fff]/;

interface Run {
  start: number;
  end: number;
  /** Index of the space inside the run, or -1. */
  space: number;
  kana: boolean;
}

/** The runs of kanji (or of katakana), each with at most one inner space. */
function runs(text: string): Run[] {
  const out: Run[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    const kind = isHan(c) ? 1 : isKatakana(c) ? 2 : 0;
    if (kind === 0) {
      i++;
      continue;
    }
    const same = kind === 1 ? isHan : isKatakana;
    const start = i;
    let space = -1;
    while (i < text.length) {
      const d = text.charCodeAt(i);
      if (same(d)) i++;
      else if (
        (d === 0x20 || d === 0x3000) && space < 0 && i - start <= 3 && same(text.charCodeAt(i + 1)) &&
        !PLACE_END.test(text.charAt(i - 1))
      ) {
        space = i;
        i++;
      } else break;
    }
    out.push({ start, end: i, space, kana: kind === 2 });
  }
  return out;
}

export function japaneseNames(text: string, out: DetectorFinding[], max: number): void {
  for (const r of runs(text)) {
    if (out.length >= max) return;
    const confidence = scoreRun(text, r);
    if (confidence > 0) out.push({ confidence, start: r.start, end: r.end });
  }
}

/** 様 / 氏 / 殿 / 君 glued to the end of a kanji run: the run is the name, the character its honorific. */
const HONORIFIC_KANJI = /[様氏殿君]$/;
/** "大塚 あゆみさん": a given name in hiragana after the surname and a space, then an honorific. */
const HIRAGANA_GIVEN = /^[ \u3000]([\u3041-\u3096]{2,4})(?=さん|様|さま|ちゃん|くん)/;

function scoreRun(text: string, run: Run): number {
  let r = run;
  let honorific = false;
  if (!r.kana && HONORIFIC_KANJI.test(text.slice(r.start, r.end)) && r.end - r.start >= 3) {
    r = { ...r, end: r.end - 1 };
    honorific = true;
  }
  if (!r.kana && r.space < 0) {
    const given = HIRAGANA_GIVEN.exec(text.slice(r.end, r.end + 8));
    if (given) r = { ...r, space: r.end, end: r.end + 1 + (given[1] as string).length };
  }
  run.end = r.end;
  const name = text.slice(r.start, r.end);
  const chars = r.end - r.start - (r.space >= 0 ? 1 : 0);
  if (chars < 2 || chars > (r.kana ? 9 : 7) || NOT_NAMES.has(name)) return 0;
  const before = text.charCodeAt(r.start - 1);
  // お客様, ご主人様: an honorific prefix makes the word a title, not a name.
  if (before === 0x304a || before === 0x3054) return 0;
  if (honorific || HONORIFIC.test(text.slice(r.end, r.end + 3))) return 0.85;
  if (LABEL_BEFORE.test(text.slice(Math.max(0, r.start - 8), r.start)) && !PLACE_END.test(name)) return 0.85;
  if (r.kana) return 0;
  const family = r.space >= 0 ? text.slice(r.start, r.space) : '';
  const givenLength = r.end - r.space - 1;
  if (family && givenLength <= 3 && !PLACE_END.test(name)) {
    // "伊東 明美です", "…と申します": a spaced pair introduced as the speaker.
    if (SURNAMES.has(family) || SELF_INTRO_AFTER.test(text.slice(r.end, r.end + 5))) return 0.8;
    return 0.7;
  }
  if (r.space < 0 && chars >= 3 && chars <= 4 && !PLACE_END.test(name)) {
    const glued = SURNAMES.has(name.slice(0, 2)) ? 2 : SURNAMES.has(name.slice(0, 3)) ? 3 : 0;
    if (glued > 0 && chars - glued >= 1 && chars - glued <= 2) return 0.75;
  }
  return 0;
}
