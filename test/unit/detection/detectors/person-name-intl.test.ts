import { PersonNameDetector } from '../../../../src/detection/detectors/pii/person-name-detector';
import { isFirst, isLast } from '../../../../src/detection/detectors/pii/name-lexicon';

const detector = new PersonNameDetector();
const signal = new AbortController().signal;
const atL2 = (text: string) =>
  detector
    .detect({ text, direction: 'input' }, signal)
    .filter((f) => f.confidence >= 0.75)
    .map((f) => text.slice(f.start, f.end));

describe('names in other languages', () => {
  it.each([
    ['de, title', 'Sehr geehrte Frau Katharina Vogelsang, Ihre Bestellung ist unterwegs.', 'Katharina Vogelsang'],
    ['de, account holder noun before', 'Bitte überweisen Sie den Betrag, Kontoinhaber Jürgen Hoffmann.', 'Jürgen Hoffmann'],
    ['de, colleague', 'Unser neuer Kollege Lukas Brandstätter beginnt am 1. März.', 'Lukas Brandstätter'],
    ['fr, self-introduction', "Bonjour, je m'appelle Élodie Marchand et j'habite à Lyon.", 'Élodie Marchand'],
    ['fr, au nom de', 'Merci de virer le remboursement au nom de Thierry Lemaire.', 'Thierry Lemaire'],
    ['es, soy', 'Hola, soy Lucía Fernández y necesito ayuda.', 'Lucía Fernández'],
    ['es, a nombre de', 'Haz la transferencia a nombre de Javier Morales Ruiz.', 'Javier Morales Ruiz'],
    ['it, sono', 'Buongiorno, sono Giulia Romano.', 'Giulia Romano'],
    ['it, dott.', 'Potresti scrivere al dott. Alessandro Bianchi?', 'Alessandro Bianchi'],
    ['nl, ten name van', 'Het IBAN staat ten name van Willem Jansen.', 'Willem Jansen'],
    ['en, unknown surname', 'Ship the replacement to Hector Pagac, please.', 'Hector Pagac'],
    ['en, degree suffix', 'For the payroll form: Corrine Beahan DDS, please.', 'Corrine Beahan'],
    ['ja, honorific', '山田太郎様、ご注文ありがとうございます。', '山田太郎'],
    ['ja, さん', '佐藤花子さんの携帯番号を教えてください。', '佐藤花子'],
    ['ja, spaced pair introduced', '伊東 明美です。よろしくお願いします。', '伊東 明美'],
    ['ja, common surname glued', '住所の最後に鈴木一郎と書いてください', '鈴木一郎'],
    ['ja, hiragana given name', '大塚 あゆみさんにメールを書いてください。', '大塚 あゆみ'],
  ])('finds a name (%s)', (_label, text, name) => {
    expect(atL2(text)).toEqual([name]);
  });

  it.each([
    ['street named after a person, after a house number', 'Ship to 872 Jaden Circles, Lynnville, AZ 52754.'],
    ['street named after a person, after a street type', 'Livraison au 491 Passage Pierre Charron, 37867 Clermont-Ferrand.'],
    ['Italian street', 'Abito in Via Giuseppe Verdi 18 a Milano.'],
    ['German nouns', 'Die Lieferung für die Rechnung kommt morgen mit der Post.'],
    ['ja, customer and everyone', 'お客様と皆様にお知らせします。仕様の変更と同様の模様です。'],
    ['ja, places', '東京都渋谷区の渋谷駅で待ち合わせ。'],
    ['code', 'const userName = getUserName(user.firstName); class MariaController {}'],
  ])('does not report %s at L2', (_label, text) => {
    expect(atL2(text)).toEqual([]);
  });

  it('reads the generated lexicons (given names of several languages, census surnames)', () => {
    for (const given of ['jurgen', 'giulia', 'thierry', 'lucia', 'lukas', 'elodie']) expect(isFirst({ lower: given })).toBe(true);
    for (const surname of ['gonzalez', 'nguyen', 'kowalski', 'schmidt']) expect(isLast({ lower: surname })).toBe(true);
    // English words are not surnames of the generated list: "Power", "Best" stay weak evidence.
    expect(isLast({ lower: 'power' })).toBe(false);
  });
});
