/**
 * Small hand-curated lists used by the unknown-links detector (sources: the shortener and phishing-target
 * lists commonly published with URL-reputation tooling; written from knowledge, nothing downloaded).
 */

/** URL shorteners: the real target is hidden, so a shortened link always scores high. */
export const SHORTENER_DOMAINS: readonly string[] = `
bit.ly bitly.com t.co tinyurl.com goo.gl ow.ly is.gd buff.ly rebrand.ly cutt.ly shorturl.at rb.gy t.ly
tiny.cc bl.ink short.io s.id v.gd lnkd.in trib.al dlvr.it adf.ly shorte.st ouo.io soo.gd clck.ru x.co
su.pr tiny.one shorturl.com urlz.fr lstu.fr surl.li qrco.de qr.net u.to kutt.it gg.gg bit.do mcaf.ee
tr.im po.st ift.tt
`
  .split(/\s+/)
  .filter((d) => d.length > 0);

/**
 * Brand labels that phishing domains imitate (the second-level label of the brand's own domain). A host
 * whose registrable label is within a small edit distance of one of these, equals one after undoing
 * digit/letter swaps ("g00gle", "paypa1", "rnicrosoft"), or embeds one ("paypal-login", "secure-apple"),
 * is a look-alike when its registrable domain is not itself well known.
 */
export const PHISHING_TARGET_BRANDS: readonly string[] = `
google gmail youtube facebook instagram whatsapp messenger microsoft office outlook hotmail onedrive
sharepoint apple icloud itunes amazon paypal netflix linkedin twitter github gitlab bitbucket dropbox
adobe yahoo chase wellsfargo bankofamerica citibank capitalone hsbc barclays santander lloydsbank
natwest coinbase binance kraken metamask blockchain stripe shopify ebay walmart steampowered
steamcommunity discord telegram roblox spotify openai chatgpt anthropic salesforce okta docusign
zoom slack atlassian office365 microsoftonline usps fedex americanexpress mastercard venmo
revolut robinhood airbnb booking twitch tiktok snapchat pinterest reddit wetransfer
`
  .split(/\s+/)
  .filter((d) => d.length > 0);

/** TLDs with a high share of abuse in published domain-abuse reports: +0.05 for an unknown domain. */
export const ABUSED_TLDS: ReadonlySet<string> = new Set(
  'zip mov xyz top tk ml ga cf gq icu buzz click country kim work rest cam monster quest sbs cfd lol fun'.split(' '),
);

/**
 * Real TLDs that are also common file extensions (`README.md`, `setup.py`, `update-gyp.py`, `main.tf`,
 * `id_rsa.pub`): a bare candidate ending in one of these is only a link with a path (`evil.sh/install`).
 */
export const FILE_EXTENSION_TLDS: ReadonlySet<string> = new Set(
  'md py sh rs pl pm so ps ml mk am zip mov sc st ms bz run in cc tf gs cr sv pub app do'.split(' '),
);

/**
 * Real TLDs that are also common code member names (`user.name`, `item.id`, `obj.data`, `Foo.new`,
 * `this.next`): a bare candidate ending in one of these needs a path, or a hyphen in its name (code
 * identifiers have none: `my-site.info` is a domain, `self.info` is not).
 */
export const AMBIGUOUS_BARE_TLDS: ReadonlySet<string> = new Set(
  `is to it id name bar link click group email info new map call data java post read open date now today
  day host site page web blog shop store live cloud one win work review stream build codes tools support
  help services media design game games play space plus best cool zone city land care fit events news
  photo video music audio show test tel moe ing hot ltd art fund cash loan ninja rocks style life world
  shell next pid coffee foo target`
    .split(/\s+/)
    .filter((d) => d.length > 0),
);

/**
 * Top-level domains a bare `name.tld` (no scheme, no `www.`, no path) may end in: the common generic
 * TLDs plus every two-letter country code outside AMBIGUOUS_BARE_TLDS. A bare `options.shell`,
 * `this.next` or `foo.coffee` (real but rare TLDs) reads as code; with a path or a scheme it is a link.
 */
export const COMMON_BARE_GTLDS: ReadonlySet<string> = new Set(
  'com net org io co ai dev gov edu mil int biz xyz tech online site store shop club top pro cloud tv gg fm ly me us uk'.split(' '),
);

/** Registrable labels used as placeholders in documentation ("foo.com", "yourdomain.com"). */
export const PLACEHOLDER_LABELS: ReadonlySet<string> = new Set(
  'foo bar baz qux quux example test sample domain yourdomain mydomain yoursite mysite your-domain my-domain yourcompany yourapp myapp'.split(' '),
);

/** First labels that make a bare two-label candidate a member access in code (`this.next`, `process.pid`). */
export const CODE_RECEIVERS: ReadonlySet<string> = new Set(
  `this self options opts process o obj module exports window document console req res ctx app config e err
  error event data item user props state util utils path fs os np pd math json array string object promise
  result response request client server router db model schema type types value values x y z a b c i j k el
  node tree list map set key keys args argv env context settings params query body headers file files`
    .split(/\s+/)
    .filter((d) => d.length > 0),
);
