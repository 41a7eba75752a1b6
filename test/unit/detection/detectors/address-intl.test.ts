import { AddressDetector } from '../../../../src/detection/detectors/pii/address-detector';

const detector = new AddressDetector();
const signal = new AbortController().signal;
const atL2 = (text: string) =>
  detector
    .detect({ text, direction: 'input' }, signal)
    .filter((f) => f.confidence >= 0.75)
    .map((f) => text.slice(f.start, f.end));

describe('international addresses', () => {
  it.each([
    ['UK', 'Please send it to 27 Kingsley Road, Brighton BN1 6JD today.', '27 Kingsley Road, Brighton BN1 6JD'],
    ['UK, street type no list holds', 'Post to 519 Monroe Lea, Legros-le-Roberts HG28 9EY.', '519 Monroe Lea, Legros-le-Roberts HG28 9EY'],
    ['DE', 'Lieferung an die Lindenstraße 42, 10969 Berlin bitte.', 'Lindenstraße 42, 10969 Berlin'],
    ['AT', 'Vermieterin: Mariahilfer Straße 88, 1070 Wien.', 'Mariahilfer Straße 88, 1070 Wien'],
    ['FR', "J'habite au 12 rue des Lilas, 69003 Lyon.", '12 rue des Lilas, 69003 Lyon'],
    ['FR avenue + name', 'Livraison au 8 avenue Jean Jaurès, 31000 Toulouse.', '8 avenue Jean Jaurès, 31000 Toulouse'],
    ['FR voie', "Livraison chez lui, 59 Voie de l'Abbaye, 04458 Calais.", "59 Voie de l'Abbaye, 04458 Calais"],
    ['ES', 'Mi dirección es Calle de Alcalá 120, 28009 Madrid.', 'Calle de Alcalá 120, 28009 Madrid'],
    ['ES sin número', 'Envíe el paquete a Paseo Miguel Alejandro s/n., 97240 El Ejido.', 'Paseo Miguel Alejandro s/n., 97240 El Ejido'],
    ['ES type word', 'Envíe el paquete a Travesía Daniela, 9, 00457 Paterna.', 'Travesía Daniela, 9, 00457 Paterna'],
    ['IT', 'Abito in Via Garibaldi 18, 20121 Milano.', 'Via Garibaldi 18, 20121 Milano'],
    ['IT contrada', 'Spedisca il pacco a Contrada Francesco 732, 51907 Carfizzi.', 'Contrada Francesco 732, 51907 Carfizzi'],
    ['NL', 'Bezorgd op Prinsengracht 263, 1016 GV Amsterdam.', 'Prinsengracht 263, 1016 GV Amsterdam'],
    ['NL number addition', 'Stuur het naar Evadijk 323 I, 4334 ZW Westhim.', 'Evadijk 323 I, 4334 ZW Westhim'],
    ['US, any suffix with City, ST ZIP', 'Ship to 5914 Kaley Fort, Mandybury, NY 44340-0060. Thanks', '5914 Kaley Fort, Mandybury, NY 44340-0060'],
    ['JP with 〒', 'ご注文の商品は〒150-0002 東京都渋谷区渋谷2丁目21番1号にお届けします。', '〒150-0002 東京都渋谷区渋谷2丁目21番1号'],
    ['JP without 〒', '住所は大阪府大阪市北区梅田3丁目1番3号です。', '大阪府大阪市北区梅田3丁目1番3号'],
  ])('finds a %s address', (_label, text, address) => {
    expect(atL2(text)).toEqual([address]);
  });

  it.each([
    ['a date and a year', 'Returns the milliseconds since midnight, January 1, 1970 UTC.'],
    ['a date in German', 'Die Sitzung ist am Montag 12, 2024 Berlin'],
    ['prose with numbers', 'The population grew from 1 234 567 in 2010 to 1 498 220 in 2020, about 21%.'],
    ['a recipe', 'Bei 180 Grad 25 Minuten backen, dann 10 Minuten ruhen lassen.'],
    ['code', "const config = { port: 8080, host: '0.0.0.0', retries: 5 };\nChapter 3, 1024 Bytes per block"],
    ['a version list', 'Version 12, 2025 Edition and Release 4, 1999 Classic'],
    ['Japanese prose with numbers', '新しいバージョン2.3.1では、起動時間が約30%短縮されました。'],
    ['a Japanese postcode-like number without 〒', '注文番号150-0002を確認してください。'],
  ])('does not report %s at L2', (_label, text) => {
    expect(atL2(text)).toEqual([]);
  });
});
