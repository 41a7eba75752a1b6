/**
 * Surnames for pii/name, lower case.
 *
 * Conceptual origin: the public-domain US Census Bureau surname frequency list (the most common
 * surnames of the 2000/2010 censuses) and the most common surnames of England and Wales, widened with
 * common surnames of Hispanic, South Asian, East Asian, Arabic, African and European origin. Written
 * from general knowledge; nothing was downloaded. Surnames that are also ordinary English words
 * ("brown", "young", "king", "hill", …) are kept and marked as ambiguous by the detector.
 *
 * A TypeScript module rather than a .txt file so it ships in dist/ with the compiled code.
 */
const LAST_NAMES = `
smith johnson williams brown jones garcia miller davis rodriguez martinez hernandez lopez gonzalez
wilson anderson thomas taylor moore jackson martin lee perez thompson white harris sanchez clark
ramirez lewis robinson walker young allen king wright scott torres nguyen hill flores green adams
nelson baker hall rivera campbell mitchell carter roberts gomez phillips evans turner diaz parker cruz
edwards collins reyes stewart morris morales murphy cook rogers gutierrez ortiz morgan cooper peterson
bailey reed kelly howard ramos kim cox ward richardson watson brooks chavez wood james bennett gray
mendoza ruiz hughes price alvarez castillo sanders patel myers long ross foster jimenez powell jenkins
perry russell sullivan bell coleman butler henderson barnes gonzales fisher vasquez simmons romero
jordan patterson alexander hamilton graham reynolds griffin wallace moreno west cole hayes bryant
herrera gibson ellis tran medina aguilar stevens murray ford castro marshall owens harrison fernandez
mcdonald woods washington kennedy wells vargas henry chen freeman webb tucker guzman burns crawford
olson simpson porter hunter gordon mendez silva shaw snyder mason dixon munoz hunt hicks holmes palmer
wagner black robertson boyd rose stone salazar fox warren mills meyer rice schmidt garza daniels
ferguson nichols stephens soto weaver ryan gardner payne grant dunn kelley spencer hawkins arnold
pierce vazquez hansen peters santos hart bradley knight elliott cunningham duncan armstrong hudson
carroll lane riley andrews alvarado ray delgado berry perkins hoffman johnston matthews pena richards
contreras willis carpenter lawrence sandoval guerrero george chapman rios estrada ortega watkins
greene nunez wheeler valdez harper burke larson santiago maldonado morrison franklin carlson austin
dominguez carr lawson jacobs obrien lynch singh vega bishop montgomery oliver jensen harvey williamson
gilbert carrillo mccoy howell lucas camacho dean sims cervantes castaneda dawson wolfe kramer bowen
fuller schultz hale hanson robbins chambers sharp trujillo hodges wade francis garrett daniel mack
fields kennedy marquez frazier wilkinson bates hardy barnett rhodes mcdaniel caldwell lowe weber
brewer byrd summers norris holland wong howe fletcher moss silva lambert douglas parsons stanley
cummings burton christensen oconnor bush benson hayes becker lindsey manning potter mullins wolf
mckenzie reid ingram bowers garner phelps joseph sutton wolfe barker hines doyle sherman hughes
thornton tate mann hammond love goodman jennings pope zimmerman kerr bauer hubbard page tyler mclaughlin
newman lloyd stokes todd farmer clayton stephenson sutherland walsh mccarthy kelly byrne murphy
obrien ryan oneill doherty quinn kennedy lynch gallagher duffy mcgrath brennan burke fitzgerald
gallagher kavanagh mccann mcmahon nolan reilly sheehan whelan
davies evans thomas roberts hughes lewis morgan griffiths owen price phillips jenkins rees powell
jones williams taylor wright walker wood thompson robinson edwards green hall clarke jackson clark
turner hill cooper ward morris king harris lee martin moore allen young baker white scott watson
mitchell carter kelly adams cook collins bennett shaw cox richardson fox russell bailey chapman marshall
mason pearson knight graham butler dixon hunt holmes palmer mills barnes fisher henderson ellis
patel khan shah ahmed ali hussain begum rahman akhtar iqbal malik rashid sharma kumar gupta verma
mehta joshi desai reddy rao nair iyer menon pillai chatterjee banerjee mukherjee das bose sen ghosh
chowdhury dutta kapoor khanna malhotra chopra agarwal bansal jain sinha mishra pandey tiwari yadav
srivastava saxena thakur chauhan rathore bhatt trivedi shukla dubey naidu krishnan subramanian
venkatesh raman natarajan balasubramanian ramaswamy gill sandhu dhillon sidhu grewal
wang li zhang liu chen yang huang zhao wu zhou xu sun ma zhu hu guo he lin luo zheng liang xie song
tang han feng deng cao peng zeng xiao tian dong pan yuan cai jiang yu du ye cheng wei su lu ding ren
shen yao lu jiang cui zhong tan lu wang fan jin shi liao jia xia fu fang zou xiong bai meng qin qiu
hou jiang yin xue yan duan lei long li tao he gu mao hao gong shao wan qian yan dai
chan cheung wong leung lau ng ho chow tse yip kwok tam lam chu fung tsang yeung mak
nguyen tran le pham hoang huynh phan vu vo dang bui do ho ngo duong ly
kim lee park choi jung kang cho yoon jang lim han oh seo shin kwon hwang ahn song jeon hong
sato suzuki takahashi tanaka watanabe ito yamamoto nakamura kobayashi kato yoshida yamada sasaki
yamaguchi matsumoto inoue kimura hayashi shimizu yamazaki mori abe ikeda hashimoto ishikawa ogawa
okada goto hasegawa murakami kondo ishii sakamoto endo aoki fujii nishimura fukuda ota miura okamoto
fernandez gonzalez rodriguez lopez martinez sanchez perez gomez martin jimenez ruiz hernandez diaz
moreno alvarez munoz romero alonso gutierrez navarro torres dominguez vazquez ramos gil ramirez
serrano blanco molina morales suarez ortega delgado castro ortiz rubio marin sanz iglesias nunez
medina garrido cortes castillo santos lozano guerrero cano prieto mendez cruz calvo gallego vidal
leon marquez herrera pena flores cabrera campos vega fuentes carrasco diez caballero reyes nieto
aguilar pascual santana herrero lorenzo hidalgo montero ibanez gimenez ferrer duran vicente benitez
mora santiago arias vargas carmona crespo roman pastor soto saez velasco moya soler parra esteban
bravo gallardo rojas pardo merino franco espinosa izquierdo lara rivas silva rivera casado camacho
arroyo vallejo salazar mejia avila villanueva acosta aguirre andrade benavides bermudez cardenas
cisneros espinoza figueroa galindo ibarra juarez lozano luna macias miranda montes ochoa orozco
pacheco padilla quintero rosales salinas solis tapia trevino valencia velazquez villarreal zamora
zuniga beltran cortez escobar fierro gallegos lucero meza nava olivares ponce quintana rangel
renteria saucedo sepulveda toledo urbina valle zavala
rossi russo ferrari esposito bianchi romano colombo ricci marino greco bruno gallo conti deluca
mancini costa giordano rizzo lombardi moretti barbieri fontana santoro mariani rinaldi caruso ferrara
galli martini leone longo gentile martinelli vitale lombardo serra coppola desantis dangelo marchetti
parisi villa conte ferraro ferri fabbri bianco marini grasso valentini messina sala deangelis gatti
pellegrini palumbo sanna farina rizzi monti cattaneo morelli amato silvestri mazza testa grassi
pellegrino carbone giuliani benedetti barone rossetti caputo montanari guerra palmieri bernardi
martino fiore deluca ferretti bellini basile riva donati piras vitali battaglia sartori neri costantini
muller schmidt schneider fischer weber meyer wagner becker schulz hoffmann schafer koch bauer richter
klein wolf schroder neumann schwarz zimmermann braun kruger hofmann hartmann lange schmitt werner
schmitz krause meier lehmann schmid schulze maier kohler herrmann konig walter mayer huber kaiser
fuchs peters lang scholz moller weiss jung hahn schubert vogel friedrich keller gunther frank berger
winkler roth beck lorenz baumann franke albrecht schuster simon ludwig bohm winter kraus martin
schumacher kramer vogt stein jager otto sommer gross seidel heinrich brandt haas schreiber graf
schulte dietrich ziegler kuhn kuhl pohl engel horn busch bergmann thomas voigt sauer arnold wolff
pfeiffer
martin bernard dubois thomas robert richard petit durand leroy moreau simon laurent lefebvre michel
garcia david bertrand roux vincent fournier morel girard andre lefevre mercier dupont lambert bonnet
francois martinez legrand garnier faure rousseau blanc guerin muller henry roussel nicolas perrin
morin mathieu clement gauthier dumont lopez fontaine chevalier robin masson sanchez gerard nguyen
boyer denis lemaire duval joly gautier roger roche roy noel meyer lucas meunier jean perez marchand
dufour blanchard marie barbier brun dumas brunet schmitt leroux colin fernandez pierre renard arnaud
rolland caron aubert giraud leclerc vidal bourgeois renaud lemoine picard gaillard philippe leclercq
lacroix fabre dupuis olivier rodriguez da silva hubert louis charles guillot riviere le gall guillaume
adam rey moulin gonzalez berger lecomte menard fleury deschamps carpentier julien benoit paris maillard
marchal aubry vasseur le roux renault jacquet collet prevost poirier charpentier royer huet baron
dupuy pons paul laine carre breton remy schneider perrot guyot barre marty cousin
nowak kowalski wisniewski wojcik kowalczyk kaminski lewandowski zielinski szymanski wozniak
dabrowski kozlowski jankowski mazur kwiatkowski krawczyk piotrowski grabowski nowakowski pawlowski
michalski nowicki adamczyk dudek zajac wieczorek jablonski krol majewski olszewski jaworski wrobel
malinowski pawlak witkowski walczak stepien gorski rutkowski michalak sikora ostrowski baran duda
szewczyk tomaszewski pietrzak marciniak wroblewski zalewski jakubowski jasinski zawadzki sadowski
bak chmielewski wlodarczyk borkowski czarnecki sawicki sokolowski urbanski kubiak maciejewski
szczepanski kucharski wilk kalinowski lis mazurek wysocki adamski kazmierczak wasilewski sobczak
czerwinski andrzejewski cieslak glowacki zakrzewski kolodziej sikorski krajewski gajewski szymczak
ivanov smirnov kuznetsov popov vasiliev petrov sokolov mikhailov novikov fedorov morozov volkov
alekseev lebedev semenov egorov pavlov kozlov stepanov nikolaev orlov andreev makarov nikitin
zakharov zaitsev soloviev borisov yakovlev grigoriev romanov vorobiev sergeev kuzmin frolov
alexandrov dmitriev korolev gusev kiselev ilyin maksimov polyakov sorokin vinogradov kovalev belov
medvedev antonov tarasov zhukov baranov filippov komarov davydov belyaev gerasimov bogdanov osipov
sidorov matveev titov markov mironov krylov kulikov karpov vlasov melnikov denisov gavrilov tikhonov
kazakov afanasiev danilov savelyev timofeev fomin chernov abramov martynov efimov fedotov shcherbakov
nazarov kalinin isaev chernyshev bykov maslov rodionov konovalov lazarev voronin klimov filatov
ponomarev golubev kudryavtsev prokhorov naumov potapov zhuravlev ovchinnikov trofimov leonov
sobolev ermakov kolesnikov goncharov emelyanov nikiforov grachev kotov grishin efremov arkhipov
gromov kirillov malyshev panov moiseev rumyantsev akimov kondratiev biryukov gorbunov anisimov
eremin tikhomirov galkin lukyanov mikheev skvortsov yudin belousov nesterov simonov prokofiev
kharitonov knyazev tsvetkov levin mitrofanov voronov aksenov sofronov maltsev loginov gorshkov
savin krasnov mayorov demidov eliseev rybakov safonov plotnikov demin khokhlov fadeev molchanov
ignatov litvinov ershov ushakov dementiev ryabov mukhin kalashnikov leontiev lobanov kuzin
korneev evdokimov borodin platonov nekrasov balashov bobrov zhdanov blinov ignatiev korotkov
muravyov kryukov belyakov bogomolov drozdov lavrov zuev petukhov larin nikulin serov terentiev
zotov ustinov fokin samoilov konstantinov sakharov shishkin samsonov cherkasov chistyakov nosov
kornilov gurov
papadopoulos papadakis georgiou dimitriou nikolaou konstantinou ioannou vasileiou
mohammed hassan hussein abdullah ibrahim mahmoud mustafa khalil saleh haddad khoury nasser aziz
hamdan darwish mansour najjar said farah awad bakr habib jaber karam qasim salem sultan yousef
okafor okeke okonkwo nwosu eze obi adeyemi adebayo oladipo okoro chukwu ogunleye balogun afolabi
mensah asante owusu boateng osei appiah agyeman acheampong kamau mwangi otieno ochieng njoroge
wanjiku kariuki omondi mutua kiplagat dlamini nkosi ndlovu khumalo mahlangu zulu mokoena sithole
van der berg jansen de vries bakker visser smit meijer de boer mulder de groot bos vos peters hendriks
dekker brouwer de wit dijkstra smits de graaf van dijk van leeuwen kok jacobs de haan vermeulen
van den berg van der meer schouten willems hoekstra maas verhoeven koster prins blom huisman peeters
andersson johansson karlsson nilsson eriksson larsson olsson persson svensson gustafsson pettersson
jonsson jansson hansson bengtsson lindberg lindqvist magnusson lindstrom olofsson lindgren axelsson
berg bergstrom lundberg lundgren jakobsson berglund sandberg fredriksson mattsson henriksson
hansen johansen olsen larsen andersen pedersen nilsen kristiansen jensen karlsen johnsen pettersen
eriksen berg haugen hagen johannessen andreassen jacobsen dahl jorgensen halvorsen
korhonen virtanen makinen nieminen makela hamalainen laine heikkinen koskinen jarvinen lehtonen
lehtinen saarinen salminen heinonen niemi heikkila kinnunen salonen turunen salo laitinen tuominen
rantanen karjalainen jokinen mattila savolainen lahtinen ahonen
silva santos ferreira pereira oliveira costa rodrigues martins jesus sousa fernandes goncalves gomes
lopes marques alves almeida ribeiro pinto carvalho teixeira moreira correia mendes nunes soares vieira
monteiro cardoso rocha neves coelho cruz cunha pires ramos reis simoes antunes matos fonseca machado
araujo barbosa tavares lourenco castro figueiredo azevedo freitas
cohen levy mizrahi peretz biton dahan avraham friedman katz azulay malka amar ohana shapiro
goldberg goldstein rosenberg rosen kaplan greenberg schwartz weiss stein levine horowitz bernstein
feldman rubin shapiro silverman abrams
mcallister mcbride mccabe mccormick mcdermott mcdowell mcgee mcgowan mcguire mcintosh mcintyre
mckay mckee mckinney mclean mcleod mcmillan mcnamara mcneil mcpherson macdonald mackenzie mackay
maclean macleod macmillan macpherson
abbott acevedo adkins aguilar albert alston atkins atkinson avery ayala bailey baldwin ball ballard
banks barber barlow barnett barr barrett barton bass baxter beach bean beasley beck bender benton
best bird blackburn blackwell blair blake blankenship boone booth bowman boyer boyle bradford bradshaw
brady branch bray brennan bridges briggs britt brock browning bruce buchanan buckley bullock burch
burgess burnett burris cabrera cain calderon calhoun callahan cannon cantrell carey carney carson
carver case cash chandler chaney chase cherry christian church clay clemons cline cobb cochran
coffey cohen colon combs compton conley conner conrad conway copeland cortez cotton craft crane
crosby cross cummings curry dale dalton daugherty davenport david dejesus dillon dodson donovan
dorsey dotson downs doyle drake dudley duffy duke duncan dunlap durham dyer eaton english erickson
espinoza everett farley farrell faulkner finch finley fitzgerald fitzpatrick fleming flowers
floyd flynn forbes foreman fowler frost fry frye gaines galloway gamble gates gay gentry gilliam
gilmore glass glenn golden good goodwin gould graves gregory griffith grimes guerra guthrie hahn
hancock hardin harding hardy harmon harrell hatfield hawkins hays head hebert hendrix hensley
herman hess hester hewitt hickman hinton hobbs hodge hogan holcomb holden holloway holt hood hooper
hoover hopkins horne horton house houston huff humphrey hurley hurst hutchinson hyde irwin
jarvis jefferson joyce kane kaufman keith keller kemp kent kerr key kidd kirby kirk klein knapp
knox koch lamb lancaster landry lang langley larsen leach leblanc levy lindsay little livingston
logan lott lowery lucas luna lyons macias maddox malone mann marks mathis maxwell may mayer mayo
mccall mcclain mcclure mcconnell mccullough mcfarland mcgee mcknight mcmillan meadows melton
mercer merrill merritt middleton miles mooney morrow morse moses mosley moss mueller mullen
nash neal newton noble norman norton oneal osborne pace pacheco page parks parrish pate patton
pearson pennington petty pickett pittman pollard poole pratt preston pruitt puckett pugh rasmussen
ratliff rich richmond roach robbins rocha rollins rosario roth rowe rowland russo rutledge salas
sampson sawyer schneider schroeder sears sellers sexton shannon sharpe shepard shepherd short
skinner slater sloan small solomon sosa sparks spears stafford stanton stark steele stein stevenson
stout strickland strong suarez swanson sweeney talley tanner terrell terry thornton tillman
townsend travis tyson underwood valentine vance vaughan vaughn velez vinson walter walton ware
waters watts weeks welch whitaker whitehead whitfield whitley wiggins wilcox wilder wiley wilkerson
wilkins winters witt wolfe woodard woodward workman wyatt yates york zamora
`;

/** Lower-case surnames, de-duplicated (multi-word particles such as "van", "der" are separate entries). */
export const LAST_NAME_LIST: readonly string[] = [...new Set(LAST_NAMES.split(/\s+/).filter((w) => w.length > 0))];
