import { decodeHTMLStrict } from 'entities';
import { identityText, MappedTextBuilder, type MappedText } from './offset-map';

/**
 * In-place decoding of the encodings that hide single characters inside otherwise plain text:
 *
 *   - HTML character references: `&#64;`, `&#x40;` (the `;` optional, as browsers accept) and every named
 *     reference of HTML5 (`&commat;`, `&period;`, `&amp;`, `&omicron;` ...; `;` required): the common ones
 *     from NAMED_ENTITIES, the other 2,000-odd from the `entities` package (the table htmlparser2 uses).
 *     Letters matter too: "ign&omicron;re" is "ignοre" with a Greek omicron, which the confusable folding
 *     then turns into "ignore";
 *   - URL percent-encoding: runs of `%XX` decoded as UTF-8 (`%6A%61%6E%65%40` → `jane@`); a run that is
 *     not valid UTF-8 is left alone.
 *
 * Each reference / escape maps back to its own source span, so "jane&#64;acme.com" decodes to
 * "jane@acme.com" and a finding on it maps to exactly "jane&#64;acme.com".
 */

/**
 * Named references worth decoding: punctuation used to hide e-mail addresses and URLs, and the usual ones.
 * Looked up before the HTML5 table of `entities`, and they win where the two differ: `&tilde;` is "~" here
 * (HTML5: U+02DC), `&fullstop;` is not HTML5, and the spaces are plain spaces.
 */
const NAMED_ENTITIES: Readonly<Record<string, string>> = Object.freeze({
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', commat: '@', period: '.', fullstop: '.',
  lowbar: '_', UnderBar: '_', hyphen: '\u2010', dash: '\u2010', minus: '\u2212', plus: '+', colon: ':',
  semi: ';', comma: ',', sol: '/', bsol: '\\', num: '#', percnt: '%', excl: '!', quest: '?', equals: '=',
  lpar: '(', rpar: ')', lsqb: '[', rsqb: ']', lbrack: '[', rbrack: ']', lcub: '{', rcub: '}', lbrace: '{',
  rbrace: '}', ast: '*', midast: '*', verbar: '|', vert: '|', Tab: '\t', NewLine: '\n', dollar: '$',
  grave: '`', Hat: '^', tilde: '~', ensp: ' ', emsp: ' ', thinsp: ' ', zwnj: '\u200c', zwj: '\u200d',
  shy: '\u00ad', ndash: '\u2013', mdash: '\u2014', lsquo: '\u2018', rsquo: '\u2019', ldquo: '\u201c',
  rdquo: '\u201d', hellip: '\u2026', middot: '\u00b7', bull: '\u2022', copy: '\u00a9', reg: '\u00ae',
});

const ENTITY = /&(?:#(\d{1,7});?|#[xX]([0-9A-Fa-f]{1,6});?|([A-Za-z][A-Za-z0-9]{1,31});)/g;
const PERCENT_RUN = /(?:%[0-9A-Fa-f]{2})+/g;
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Decodes HTML character references, mapped back through `base`. */
export function decodeHtmlEntities(source: string, base?: MappedText): MappedText {
  if (!source.includes('&')) return base ?? identityText(source);
  const builder = new MappedTextBuilder(source);
  let cursor = 0;
  ENTITY.lastIndex = 0;
  for (let m = ENTITY.exec(source); m; m = ENTITY.exec(source)) {
    const decoded = entityValue(m);
    if (decoded === undefined) {
      ENTITY.lastIndex = m.index + 1; // not a reference we decode; a later one may start inside it
      continue;
    }
    builder.keep(cursor, m.index);
    builder.replace(m.index, m.index + m[0].length, decoded);
    cursor = m.index + m[0].length;
  }
  ENTITY.lastIndex = 0;
  builder.keep(cursor, source.length);
  return builder.build(base);
}

function entityValue(m: RegExpExecArray): string | undefined {
  if (m[3] !== undefined) {
    if (Object.prototype.hasOwnProperty.call(NAMED_ENTITIES, m[3])) return NAMED_ENTITIES[m[3]];
    const decoded = decodeHTMLStrict(m[0]);
    return decoded === m[0] ? undefined : decoded;
  }
  const cp = m[1] !== undefined ? Number.parseInt(m[1], 10) : Number.parseInt(m[2] as string, 16);
  if (!Number.isFinite(cp) || cp === 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return undefined;
  return String.fromCodePoint(cp);
}

/** Decodes runs of URL percent-escapes (as UTF-8), mapped back through `base`. */
export function decodePercentEscapes(source: string, base?: MappedText): MappedText {
  if (!source.includes('%')) return base ?? identityText(source);
  const builder = new MappedTextBuilder(source);
  let cursor = 0;
  PERCENT_RUN.lastIndex = 0;
  for (let m = PERCENT_RUN.exec(source); m; m = PERCENT_RUN.exec(source)) {
    const run = m[0];
    const bytes = Buffer.from(run.replace(/%/g, ''), 'hex');
    let decoded: string;
    try {
      decoded = UTF8.decode(bytes);
    } catch {
      continue; // not UTF-8 (binary data, or a stray "%ff"): leave it as it is
    }
    builder.keep(cursor, m.index);
    if (decoded.length === bytes.length) {
      // All ASCII: one escape, one character.
      for (let k = 0; k < decoded.length; k++) builder.replace(m.index + 3 * k, m.index + 3 * k + 3, decoded.charAt(k));
    } else {
      builder.replace(m.index, m.index + run.length, decoded);
    }
    cursor = m.index + run.length;
  }
  PERCENT_RUN.lastIndex = 0;
  builder.keep(cursor, source.length);
  return builder.build(base);
}
