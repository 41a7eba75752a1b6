/**
 * Sentence templates of the generated PII evaluation set (eval-pii.ts), several per locale, in its
 * language. Placeholders: {name} {phone} {email} {address} {card} {iban} {ssn} {ip} are PII (gold
 * spans); {n} {n2} {date} {ver} {order} {amount} {year} fill the negatives (numbers that are not PII).
 */

export interface LocaleTemplates {
  positives: readonly string[];
  negatives: readonly string[];
}

export const TEMPLATES: Readonly<Record<string, LocaleTemplates>> = {
  en_US: {
    positives: [
      'Hi, this is {name}. Please call me back at {phone} about my order.',
      'Ship the replacement to {name}, {address}. Thanks!',
      'Can you write a follow-up email to {name} ({email}) about the contract renewal?',
      'My card {card} was charged twice yesterday, what should I tell the bank?',
      'For the payroll form: {name}, SSN {ssn}, phone {phone}.',
      'We keep getting failed logins from {ip}; the account owner is {name}.',
      'New tenant: {name}, moving in at {address}. Contact: {email}.',
      'Wire the deposit to {iban} and text {name} on {phone} when done.',
    ],
    negatives: [
      'Order {order} shipped on {date}; expect it within {n} business days.',
      'The build {ver} fixed {n} bugs and cut startup time by {n2}%.',
      'Revenue grew to ${amount} in {year}, up from the previous quarter.',
      'Set the timeout to {n} ms and retry up to {n2} times before failing.',
    ],
  },
  en_GB: {
    positives: [
      'Hello, {name} here. Ring me on {phone} when the engineer is on the way.',
      'Please post the documents to {name}, {address}.',
      'Could you draft a reply to {name} at {email} about the refund?',
      'Pay the invoice into {iban}, reference {order}. Questions to {name} on {phone}.',
      'The delivery for {name} at {address} was left with a neighbour.',
      'My debit card {card} was declined at the till, can you explain why?',
    ],
    negatives: [
      'Your order {order} was dispatched on {date} and should arrive in {n} working days.',
      'Version {ver} of the app is out, with {n} fixes and a {n2}% smaller download.',
      'The council spent £{amount} on road repairs in {year}.',
      'Train {n} departs from platform {n2} at 08:42.',
    ],
  },
  de: {
    positives: [
      'Guten Tag, hier ist {name}. Sie erreichen mich unter {phone}.',
      'Bitte schicken Sie die Unterlagen an {name}, {address}.',
      'Kannst du eine E-Mail an {name} ({email}) wegen der Rechnung schreiben?',
      'Bitte überweisen Sie den Betrag auf {iban}, Kontoinhaber {name}.',
      'Die Lieferung für {name} geht an {address}, Telefon {phone}.',
      'Meine Kreditkarte {card} wurde doppelt belastet, was soll ich tun?',
    ],
    negatives: [
      'Die Bestellung {order} wurde am {date} versandt, Lieferzeit {n} Werktage.',
      'Version {ver} behebt {n} Fehler und ist {n2} % schneller.',
      'Der Umsatz stieg {year} auf {amount} Euro.',
      'Bei {n} Grad {n2} Minuten backen.',
    ],
  },
  fr: {
    positives: [
      'Bonjour, je suis {name}. Vous pouvez me joindre au {phone}.',
      "Merci d'envoyer le colis à {name}, {address}.",
      'Peux-tu écrire un courriel à {name} ({email}) au sujet de la facture ?',
      'Le remboursement doit être viré sur {iban} au nom de {name}.',
      'Livraison chez {name}, {address}, tél. {phone}.',
      'Ma carte bancaire {card} a été débitée deux fois, que faire ?',
    ],
    negatives: [
      'La commande {order} a été expédiée le {date}, livraison sous {n} jours.',
      'La version {ver} corrige {n} bogues et réduit le temps de démarrage de {n2} %.',
      "Le chiffre d'affaires a atteint {amount} euros en {year}.",
      'Le train {n} part du quai {n2} à 8 h 42.',
    ],
  },
  es: {
    positives: [
      'Hola, soy {name}. Mi teléfono es {phone}.',
      'Envíe el paquete a {name}, {address}.',
      '¿Puedes escribir un correo a {name} ({email}) sobre la factura?',
      'Haga la transferencia a {iban} a nombre de {name}.',
      'La entrega para {name} es en {address}, móvil {phone}.',
      'Me cobraron dos veces en la tarjeta {card}, ¿qué hago?',
    ],
    negatives: [
      'El pedido {order} se envió el {date} y llegará en {n} días.',
      'La versión {ver} corrige {n} errores y es un {n2} % más rápida.',
      'Las ventas alcanzaron {amount} euros en {year}.',
      'El tren {n} sale del andén {n2} a las 8:42.',
    ],
  },
  it: {
    positives: [
      'Buongiorno, sono {name}. Il mio numero di telefono è {phone}.',
      'Spedisca il pacco a {name}, {address}.',
      "Puoi scrivere un'email a {name} ({email}) per la fattura?",
      "Effettui il bonifico sull'IBAN {iban} intestato a {name}.",
      'La consegna per {name} è in {address}, cellulare {phone}.',
      'Mi hanno addebitato due volte sulla carta {card}, cosa faccio?',
    ],
    negatives: [
      "L'ordine {order} è stato spedito il {date}, consegna in {n} giorni.",
      'La versione {ver} corregge {n} errori ed è più veloce del {n2}%.',
      'Il fatturato ha raggiunto {amount} euro nel {year}.',
      'Il treno {n} parte dal binario {n2} alle 8:42.',
    ],
  },
  nl: {
    positives: [
      'Hallo, met {name}. U kunt mij bellen op {phone}.',
      'Stuur het pakket naar {name}, {address}.',
      'Kun je een e-mail schrijven aan {name} ({email}) over de factuur?',
      'Maak het bedrag over naar {iban} ten name van {name}.',
      'De bezorging voor {name} is op {address}, telefoon {phone}.',
      'Mijn creditcard {card} is twee keer belast, wat moet ik doen?',
    ],
    negatives: [
      'Bestelling {order} is op {date} verzonden, levering binnen {n} dagen.',
      'Versie {ver} lost {n} fouten op en is {n2}% sneller.',
      'De omzet steeg in {year} tot {amount} euro.',
      'Trein {n} vertrekt van spoor {n2} om 8.42 uur.',
    ],
  },
  ja: {
    positives: [
      '{name}です。電話番号は{phone}です。',
      'お届け先：{address} {name}様',
      '{name}さん（{email}）に請求書についてのメールを書いてください。',
      '{name}様の携帯電話 {phone} までご連絡ください。',
      'クレジットカード{card}で二重に請求されました。',
      '{name}さんの住所は{address}です。',
    ],
    negatives: [
      'ご注文{order}は{date}に発送されました。{n}日以内に届きます。',
      'バージョン{ver}では{n}件の不具合を修正し、{n2}%高速化しました。',
      '{year}年の売上高は{amount}円でした。',
      '{n}番線から{n2}時発の電車に乗ってください。',
    ],
  },
};
