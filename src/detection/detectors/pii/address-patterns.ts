/**
 * Street-address signatures for pii/address, as data: street suffixes, state names, EU street words,
 * and the small regexes that read the parts after an address core (TAIL). Cores themselves are found by
 * address-core.ts, anchored on digit runs. No regex here runs on unbounded input: the PO-box and
 * city/state tests see at most 50 characters before a number, and the TAIL regexes are sticky with
 * bounded quantifiers (constant work per call). RE2 would cost more than the match here: its per-call
 * overhead (UTF-8 conversion, Unicode-class programs) dominated when it read address tails.
 */

/** USPS suffixes (and UK street types) that are rarely ordinary words: accepted in lower case too. */
const STRONG_SUFFIXES = [
  'Street', 'St', 'Avenue', 'Ave', 'Av', 'Boulevard', 'Blvd', 'Road', 'Rd', 'Drive', 'Dr', 'Lane', 'Ln',
  'Court', 'Ct', 'Place', 'Pl', 'Parkway', 'Pkwy', 'Highway', 'Hwy', 'Terrace', 'Ter', 'Terr', 'Circle',
  'Cir', 'Square', 'Sq', 'Trail', 'Trl', 'Plaza', 'Plz', 'Alley', 'Aly', 'Crescent', 'Cres', 'Gardens',
  'Gdns', 'Mews', 'Turnpike', 'Tpke', 'Expressway', 'Expy', 'Freeway', 'Fwy', 'Causeway', 'Esplanade',
  'Embankment', 'Boulevarde', 'Way',
  // More USPS street suffixes (Publication 28, appendix C1) and UK street types, rarely everyday words.
  'Trafficway', 'Trfy', 'Lndg', 'Ft', 'Mls', 'Cswy', 'Crse', 'Xrd', 'Crossroad', 'Estates', 'Ests', 'Rdg',
  'Underpass', 'Upas', 'Overpass', 'Opas', 'Viaduct', 'Spgs', 'Shrs', 'Byp', 'Bypass', 'Wynd', 'Drove',
];
/** Suffixes that are also everyday words ("Run", "Park", "Loop"): only counted when capitalised. */
const WEAK_SUFFIXES = [
  'Close', 'Grove', 'Row', 'Walk', 'Hill', 'Green', 'Parade', 'Pde', 'Loop', 'Run', 'Pike', 'Route', 'Rte',
  'Point', 'Pt', 'Ridge', 'Crossing', 'Xing', 'Path', 'Pass', 'Cove', 'Cv', 'Creek', 'Heights', 'Hts',
  'View', 'Vista', 'Manor', 'Bend', 'Park', 'Commons', 'Center', 'Ctr', 'Quay', 'Wharf', 'Hollow', 'Gate',
  'Yard', 'Broadway',
  'Fort', 'Landing', 'Mills', 'Mill', 'Camp', 'Course', 'Springs', 'Shores', 'Harbor', 'Harbour', 'Port',
  'Station', 'Summit', 'Valley', 'Village', 'Ville', 'Junction', 'Knoll', 'Knolls', 'Meadows', 'Orchard',
  'Prairie', 'Ranch', 'Rest', 'Spur', 'Stream', 'Track', 'Trace', 'Tunnel', 'Union', 'Well', 'Wells',
  'Lea', 'Wood', 'Woods', 'Rise', 'Vale', 'Chase', 'Croft', 'Fold', 'Brow', 'Side', 'Meadow', 'End',
  'Field', 'Fields', 'Glen', 'Dale', 'Bank', 'Hills', 'Island', 'Isle', 'Lake', 'Lakes', 'Light', 'Lock',
  'Loaf', 'Oval', 'Pines', 'Plains', 'Radial', 'Ramp', 'Rapids', 'Ridges', 'Shoal', 'Skyway', 'Square',
  'Squares', 'Streets', 'Throughway', 'Turn', 'Villages', 'Ways', 'Extension', 'Ext', 'Forge', 'Forges',
  'Ford', 'Fords', 'Forest', 'Garden', 'Burg', 'Burgs', 'Bluff', 'Bluffs', 'Bottom', 'Branch', 'Bridge',
  'Brook', 'Brooks', 'Canyon', 'Cape', 'Cliff', 'Cliffs', 'Club', 'Common', 'Corner', 'Corners', 'Crest',
  'Curve', 'Dam', 'Divide', 'Estate', 'Falls', 'Ferry', 'Flat', 'Flats', 'Freeway', 'Gateway', 'Haven',
  'Inlet', 'Key', 'Keys', 'Lodge', 'Mall', 'Mission', 'Motorway', 'Mount', 'Mountain', 'Neck', 'Pine',
  'Plain', 'Points', 'Ports', 'Shore', 'Spring', 'Stravenue', 'Sumit', 'Underpass', 'Walks', 'Motorway',
];

export const STRONG_SUFFIX_SET: ReadonlySet<string> = new Set(STRONG_SUFFIXES.map((s) => s.toLowerCase()));
export const WEAK_SUFFIX_SET: ReadonlySet<string> = new Set(WEAK_SUFFIXES.map((s) => s.toLowerCase()));

export const STATE_CODES: ReadonlySet<string> = new Set(
  ('AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND ' +
    'OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY PR GU VI AS MP ' +
    // Canadian provinces and territories (Canada Post), read the same way as US states.
    'ON QC BC AB MB SK NS NB NL PE YT NT NU').split(' '),
);
export const STATE_NAMES: readonly string[] = [
  'Alabama', 'Alaska', 'Arizona', 'Arkansas', 'California', 'Colorado', 'Connecticut', 'Delaware', 'Florida',
  'Georgia', 'Hawaii', 'Idaho', 'Illinois', 'Indiana', 'Iowa', 'Kansas', 'Kentucky', 'Louisiana', 'Maine',
  'Maryland', 'Massachusetts', 'Michigan', 'Minnesota', 'Mississippi', 'Missouri', 'Montana', 'Nebraska',
  'Nevada', 'New Hampshire', 'New Jersey', 'New Mexico', 'New York', 'North Carolina', 'North Dakota', 'Ohio',
  'Oklahoma', 'Oregon', 'Pennsylvania', 'Rhode Island', 'South Carolina', 'South Dakota', 'Tennessee', 'Texas',
  'Utah', 'Vermont', 'Virginia', 'Washington', 'West Virginia', 'Wisconsin', 'Wyoming', 'District of Columbia',
  'Puerto Rico',
];

/** Post-directionals after a street suffix ("Avenue NW"). */
export const DIRECTIONALS: ReadonlySet<string> = new Set([
  'n', 's', 'e', 'w', 'ne', 'nw', 'se', 'sw', 'n.', 's.', 'e.', 'w.', 'north', 'south', 'east', 'west',
]);

/** German / Dutch / Nordic street words at the end of a compound street name ("Hauptstraße 5"). */
export const EU_COMPOUND_ENDINGS: readonly string[] = [
  'straße', 'strasse', 'str.', 'weg', 'gasse', 'platz', 'allee', 'chaussee', 'gracht', 'straat', 'laan',
  'plein', 'kade', 'steeg', 'vej', 'gade', 'gatan', 'vägen', 'veien', 'torget', '-ring', '-damm', '-ufer',
  // Dutch and more German street words
  'dijk', 'singel', 'hof', 'plantsoen', 'pad', 'dreef', 'markt', 'baan', 'wal', 'erf', 'burgwal', 'dam',
  'damm', 'ring', 'ufer', 'steig', 'pfad', 'stieg', 'graben', 'zeile', 'chaussee', 'promenade', 'markt',
];
/** The same street words written as a separate capitalised word ("Berliner Straße 12"). */
export const EU_SEPARATE_WORDS: ReadonlySet<string> = new Set([
  'Straße', 'Strasse', 'Str.', 'Weg', 'Gasse', 'Platz', 'Allee', 'Ring', 'Damm', 'Ufer', 'Chaussee', 'Laan',
  'Plein', 'Kade', 'Gracht',
]);
/** French street types after the number ("12 rue de la Paix"); avenue/place/route need a particle. */
export const FR_TYPES: ReadonlySet<string> = new Set([
  'rue', 'boulevard', 'bd', 'chemin', 'allée', 'allee', 'impasse', 'quai', 'cours', 'voie', 'passage', 'sentier',
  'faubourg', 'square', 'ruelle', 'venelle', 'esplanade', 'promenade', 'parvis', 'rond-point', 'montée', 'traverse',
]);
export const FR_TYPES_WITH_PARTICLE: ReadonlySet<string> = new Set(['avenue', 'place', 'route']);
export const FR_PARTICLES: ReadonlySet<string> = new Set(['de', 'du', 'des', 'la', 'le', 'les', "d'", "l'", 'sur', 'en', 'aux', 'au', 'et']);
/** Spanish / Italian / Portuguese street types before the name ("Calle Mayor 10", "Via Roma 12"). */
export const ROMANCE_TYPES: ReadonlySet<string> = new Set([
  'Calle', 'Avenida', 'Avda.', 'Paseo', 'Plaza', 'Carrer', 'Via', 'Viale', 'Piazza', 'Corso', 'Largo', 'Rua',
  'Travessa', 'Praça',
  // Spanish
  'Camino', 'Carretera', 'Ronda', 'Travesía', 'Glorieta', 'Pasaje', 'Callejón', 'Calleja', 'Costanilla', 'Urbanización',
  'Muelle', 'Prolongación', 'Rambla', 'Cuesta', 'Bajada', 'Subida', 'Vía', 'Polígono', 'Partida', 'Poblado', 'Alameda',
  // Italian
  'Piazzale', 'Vicolo', 'Strada', 'Contrada', 'Borgo', 'Rotonda', 'Incrocio', 'Salita', 'Lungomare', 'Lungotevere',
  'Località', 'Frazione', 'Traversa', 'Vico', 'Galleria', 'Circonvallazione', 'Stradone', 'Calle',
]);
export const ROMANCE_PARTICLES: ReadonlySet<string> = new Set(['de', 'del', 'della', 'di', 'da', 'do', 'dos', 'la']);

/** A PO box phrase right before a number (tested on the <= 30 characters before it). */
export const PO_BOX_BEFORE = /(?:\bp\.?\s?o\.?\s?box|\bpost\s+office\s+box|\bpostfach|\bapartado(?:\s+de\s+correos)?|\bboîte\s+postale)\s*#?\s*$/i;
/** "Springfield, IL " right before a 5-digit ZIP (tested on the <= 50 characters before it). */
export const CITY_STATE_BEFORE = /(?:^|[^\p{L}])(\p{Lu}\p{Ll}+(?:[ \t]\p{Lu}\p{Ll}+){0,2}),[ \t]*([A-Z]{2})[ \t]+$/u;

/**
 * Sticky JS regexes for the parts after an address core, each tried once at a known position. Every
 * quantifier is bounded (at most 4 words of at most 31 characters), so each call does constant work.
 */
export const TAIL = {
  sep: /(?:[ \t]*(?:,|\r?\n)[ \t]*|[ \t]+)/y,
  unit: /(?:(?:apt|apartment|suite|ste|unit|room|rm|floor|fl|bldg|building|flat|dept)\.?[ \t]{0,3}#?[ \t]{0,3}[A-Za-z0-9-]{1,6}|#[ \t]?[A-Za-z0-9-]{1,6})(?![A-Za-z0-9])/iy,
  city: /(?:St\.[ \t])?\p{Lu}[\p{L}'’-]{1,30}(?![\p{L}\p{N}])(?:[ \t]\p{Lu}[\p{L}'’-]{1,30}(?![\p{L}\p{N}])){0,3}/uy,
  stateSep: /,?[ \t]{1,3}/y,
  stateCode: /[A-Z]{2}(?![A-Za-z0-9])/y,
  stateName: /\p{Lu}\p{Ll}{2,15}(?:[ \t](?:of[ \t])?\p{Lu}\p{Ll}{2,15})?(?![\p{L}\p{N}])/uy,
  postalSep: /(?:[ \t]*,[ \t]*|[ \t]*\r?\n[ \t]*|[ \t]{1,3})/y,
  usZip: /\d{5}(?:-\d{4})?(?![A-Za-z0-9])|[A-Z]\d[A-Z][ \t]?\d[A-Z]\d(?![A-Za-z0-9])/y,
  ukPostcode: /[A-Z]{1,2}\d[A-Z\d]?[ \t]?\d[A-Z]{2}(?![A-Za-z0-9])/y,
  euPostcode: /(?:\d{4}[ \t]?[A-Z]{2}|\d{4,5}|\d{4}-\d{3}|[A-Z]-\d{4,5})[ \t]+(?=\p{Lu})/uy,
};

export const TAIL_WINDOW = 160;

/** Words right before a number that make it something other than a house number. */
export const NON_HOUSE_NUMBER_WORDS: ReadonlySet<string> = new Set([
  'version', 'v', 'step', 'steps', 'chapter', 'page', 'pages', 'line', 'lines', 'port', 'rule', 'section',
  'figure', 'fig', 'table', 'item', 'items', 'level', 'phase', 'stage', 'part', 'round', 'issue', 'pr',
  'ticket', 'build', 'release', 'sprint', 'week', 'day', 'days', 'year', 'years', 'hours', 'minutes',
  'return', 'returns', 'returned', 'len', 'size', 'count', 'index', 'option', 'number', 'no', 'x',
  'times', 'about', 'approximately', 'only', 'over', 'under', 'than', 'top', 'first', 'last', 'every',
]);

/** Words shortly before an address that say it is one (+0.2). A literal alternation on a bounded window. */
export const ADDRESS_CONTEXT =
  /address|addr\b|live at|lives at|living at|located at|location:|ship to|shipping|deliver to|delivery|mail to|mailing|send (?:it |this |them )?to|billing|residence|reside at|resides at|home is|moved to|office is at|office at|visit us at|find us at|headquartered at|hq:|domicile|anschrift|adresse|dirección|direccion|indirizzo|endereço|my place is|meet me at|meet us at/i;

export const CONTEXT_WINDOW = 60;
