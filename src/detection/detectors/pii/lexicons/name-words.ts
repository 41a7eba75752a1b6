/**
 * Word lists that keep pii/name honest (hand-written, lower case): lexicon names that are also everyday
 * words, places or product names; capitalised words that are never names; words that turn a run of
 * capitalised words into an organisation or a place; and famous company names shaped like person names.
 */

function words(s: string): ReadonlySet<string> {
  return new Set(s.split(/\s+/).filter((w) => w.length > 0));
}

/**
 * Names that are also common English words, places or software: weak evidence on their own, and no
 * evidence at all at the start of a sentence ("Will you…", "May I…", "Mark the task…", "Jenkins failed").
 */
export const AMBIGUOUS_NAMES = words(`
will may mark bill rose grace hope joy faith april june august summer autumn dawn sky river storm rain
sunny honey candy angel star king prince duke page chase hunter young brown black white green gray grey
long short little small strong best hill wood woods stone rock field fields lake love good golden glass
cross case branch head hood house key major park west ford english christian church art guy ray don
pat sue rob jack drew miles frank said do he oh ho sun song fan pan tang lane hall hunt bell cook grant
price rice ward banks wells cash chance noble justice mercy bond crystal ruby amber jade pearl iris ivy
lily daisy holly heather olive violet hazel willow penny robin sandy dale glen cliff rusty dusty earl
bass bean beach cherry cotton craft crane horn lamb moss pace parks sharp summers winter winters brooks
fox wolf bird swift frost snow gay hardy moody savage worth spring north south east north cole dean
gene sterling royal chance destiny trinity genesis journey harmony melody unity liberty
jordan washington houston austin paris florence georgia virginia victoria sydney chelsea lincoln
jackson madison savannah aurora phoenix dallas denver orlando charlotte brooklyn camden regina adelaide
alexandria eugene tyler marshall lawrence preston chester kent york warren clinton trinity
jenkins travis julia ada django pascal haskell kafka cassandra alexa siri claude jasmine karma mocha
chef puppet sentry watson oracle tesla dell mercedes jaguar harley wendy hudson maven flask keras
celery spark luigi hugo jekyll gatsby ember gemini llama mistral falcon devin jarvis cortana bixby
apollo athena hermes atlas orion nova vera gus rex max buddy charlie lucky
sierra dakota aspen skye shannon eden raven thor odin sung nam mai chance sage reed
first last then also just even still well sure fine must shall can
`);

/** Capitalised words that are never part of a person's name (and end a run of capitalised words). */
export const NON_NAME_WORDS = words(`
i the a an this that these those it its we you he she they my our your his her their me us them
if when where what why how who which whom whose and but or nor so then also however therefore
yes no not please thanks thank hello hi hey dear regards best sincerely cheers ok okay
in on at for from to with by of as after before during since until about into over under between
monday tuesday wednesday thursday friday saturday sunday january february march july september
october november december today tomorrow yesterday tonight morning evening night week month year
mr mrs ms miss mx dr prof sir madam dame lady lord rev jr sr ii iii iv md phd esq
there here all any some every each many most more much other another such same own only
is are was were be been being have has had do does did would shall should can could might
new old big great good first last next previous final main general total default
note notes step steps example examples section chapter table figure appendix summary overview
introduction conclusion abstract question answer problem solution result results error warning
user users admin team teams group everyone everybody anyone someone nobody customer customers client
manager support service services hiring valued member members friend friends colleagues folks guys
world there all
api http https json html css sql url id uuid sdk cli ui ux ai ml llm gpt aws gcp
contact meet ask tell call email message ping welcome congratulations congrats happy sorry patient
employee attn signed name from to cc author sender recipient applicant candidate tenant beneficiary
cardholder surname per via re fwd fw subject date sent i'm i've i'll i'd im
`);

/** A capitalised run containing one of these is an organisation, place, product or event, not a person. */
export const ORG_PLACE_WORDS = words(`
inc corp corporation llc ltd plc co company companies group holdings partners associates capital
ventures industries motors airlines airways bank banks financial insurance foundation institute
university college school academy hospital clinic center centre museum library church cathedral
chapel temple mosque park airport station county city town state republic kingdom street st avenue
ave road rd boulevard blvd lane drive way square bridge tower building house hall hotel restaurant
cafe studios studio records press books publishing media labs lab technologies technology systems
software solutions consulting agency council committee commission department ministry office court
award prize medal cup trophy stadium arena river lake mountain mountains island islands beach valley
falls canyon bay sea ocean forest act law syndrome disease effect theorem equation method algorithm
principle paradox problem conjecture hypothesis test scale index rule memorial monument center
high elementary middle league club fc united city county network networks cloud api platform
framework library engine studio app apps series show festival conference summit day week
`);

/** Company names that read like person names ("Morgan Stanley"), lower case, space separated. */
export const ORG_NAME_PAIRS = words(
  [
    'morgan stanley', 'wells fargo', 'goldman sachs', 'charles schwab', 'john deere', 'dow jones',
    'harley davidson', 'ernst young', 'johnson controls', 'jack daniels', 'tim hortons', 'taco bell',
    'ben jerry', 'marks spencer', 'aston martin', 'rolls royce', 'alfa romeo', 'john lewis',
    'dollar general', 'jimmy john', 'bob evans', 'hugo boss', 'kate spade', 'michael kors',
    'martin luther', 'santa claus', 'uncle sam', 'lloyds banking', 'merrill lynch', 'edward jones',
    'raymond james', 'sherwin williams', 'hewlett packard', 'johnson johnson', 'baker mckenzie',
  ]
    .map((p) => p.replace(' ', '_'))
    .join(' '),
);

/** Lower-case particles allowed between the capitalised parts of a name ("Ludwig van Beethoven"). */
export const NAME_PARTICLES = words('van von der den de da di du la le del della dos das bin ibn al el ter ten');
