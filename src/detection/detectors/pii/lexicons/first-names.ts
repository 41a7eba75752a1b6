/**
 * Given names for pii/name, lower case, one lexicon entry per word.
 *
 * Conceptual origin: the public-domain US Social Security Administration baby-name tables (most common
 * given names by decade) and the UK ONS baby-name lists, widened with common given names of the largest
 * immigrant and international communities (Hispanic, South Asian, East Asian, Arabic, African, European).
 * Written from general knowledge; nothing was downloaded. Words that are also ordinary English words
 * ("will", "may", "rose", "mark", …) are kept here and marked as ambiguous by the detector.
 *
 * A TypeScript module rather than a .txt file so it ships in dist/ with the compiled code.
 */
const FIRST_NAMES = `
james john robert michael william david richard joseph thomas charles christopher daniel matthew anthony
mark donald steven paul andrew joshua kenneth kevin brian george timothy ronald edward jason jeffrey ryan
jacob gary nicholas eric jonathan stephen larry justin scott brandon benjamin samuel gregory alexander
frank patrick raymond jack dennis jerry tyler aaron jose adam nathan henry douglas zachary peter kyle
ethan walter noah jeremy christian keith roger terry gerald harold sean austin carl arthur lawrence dylan
jesse jordan bryan billy joe bruce gabriel logan albert willie alan juan wayne elijah randy roy vincent
ralph eugene russell bobby mason philip louis harry liam oliver lucas aiden jackson sebastian mateo
owen luke grayson levi isaac lincoln jaxon asher leo hudson theodore julian ezra caleb hunter connor
eli landon cameron adrian colton jeremiah jaxson easton nolan wyatt carter dominic josiah xavier evan
jace ian miles silas roman maverick everett brooks bennett axel declan emmett weston kai ryder micah
jayden cooper parker brayden nathaniel greyson sawyer chase jason damian ayden rowan beckett harrison
finn jude tristan marcus max vincent bryson kayden kingston giovanni diego luis carlos miguel antonio
alejandro jorge pedro ricardo fernando eduardo manuel francisco javier rafael sergio andres mario
roberto hector raul enrique oscar ramon ruben alberto arturo cesar salvador ernesto guillermo ignacio
julio marco santiago emiliano leonardo matias joaquin martin rodrigo tomas felipe gustavo pablo
victor hugo alfredo armando gilberto rogelio adolfo agustin alonso benito cristian esteban fabian
gerardo ivan jaime lorenzo nicolas octavio orlando rolando saul teodoro ulises valentin wilfredo
mohammed muhammad mohamed ahmed ali omar hassan hussein ibrahim yusuf yousef khalid mustafa mahmoud
abdullah abdul karim tariq faisal hamza bilal zaid samir nabil rami walid amir reza mehdi farid jamal
kareem malik rashid said salim sami tarek ziad adnan anwar bashir fadi habib imran irfan javed kamal
nasser osama rahim rizwan sajid shahid waleed yasin zain
raj rahul amit ankit arjun vikram rohan sanjay suresh ramesh rajesh anil sunil vijay ajay deepak manoj
pradeep sandeep sachin nikhil akash aditya varun karan kunal gaurav harsh ishaan vivek abhishek ashok
ravi krishna ganesh mahesh naveen prakash pranav rakesh satish siddharth tarun vishal yash arun girish
hari jagdish kishore mohan naresh rajiv sameer shankar srinivas venkat aarav vihaan reyansh ayaan
wei jun ming hao lei jian tao bo yang jie feng gang hui kang long peng qiang xin yong zhen chao dong
hiroshi takashi kenji yuki haruto sota yuto riku kaito ren hiroki daiki kazuki takumi shota ryo akira
kenta naoki satoshi shinji taro yuji koji makoto masato
minho jisoo hyun seojun jiho doyun junho sungmin dongwoo jaewon taeyang
oluwaseun chinedu emeka obinna tunde ade kwame kofi kwasi yaw kojo jabari juma baraka tendai thabo
sipho themba mandla lwazi kagiso tau musa chidi ikenna uche nnamdi babajide femi segun tobi
sven lars nils erik anders johan magnus henrik mikael fredrik olaf bjorn karl hans klaus jurgen dieter
wolfgang uwe stefan markus tobias florian lukas jonas felix maximilian moritz niklas paul jan piotr
pawel tomasz krzysztof marek andrzej michal jakub mateusz kamil lukasz dmitri sergei alexei ivan igor
vladimir nikolai andrei mikhail pavel yuri oleg boris viktor anatoly konstantin fyodor giorgos
nikos dimitris yannis kostas luca giuseppe giovanni francesco alessandro matteo andrea stefano
riccardo davide simone federico gabriele lorenzo pietro salvatore vincenzo paolo enzo fabio mauro
pierre jean jacques michel philippe alain francois nicolas olivier laurent julien sebastien thierry
christophe frederic guillaume antoine mathieu benoit yves henri rene claude andre etienne hugo louis
remi bastien cedric damien jeremy ludovic maxime pascal quentin romain sylvain thibault xavier
joao tiago rui duarte goncalo afonso bruno rodrigo diogo
dermot seamus padraig cormac ciaran eoin niall oisin ronan cillian darragh fergus lachlan angus
hamish callum alistair euan fraser murray ross duncan gordon graham iain malcolm neil stuart
mary patricia jennifer linda elizabeth barbara susan jessica sarah karen lisa nancy betty margaret
sandra ashley kimberly emily donna michelle carol amanda dorothy melissa deborah stephanie rebecca
sharon laura cynthia kathleen amy angela shirley anna brenda pamela emma nicole helen samantha
katherine christine debra rachel carolyn janet catherine maria heather diane ruth julie olivia joyce
virginia victoria kelly lauren christina joan evelyn judith megan andrea cheryl hannah jacqueline
martha gloria teresa ann sara madison frances kathryn janice jean abigail alice judy sophia grace
denise amber doris marilyn danielle beverly isabella theresa diana natalie brittany charlotte marie
kayla alexis lori ava mia amelia harper luna camila gianna aria ella ellie nora hazel zoey riley
chloe layla lily aurora violet nova emilia penelope scarlett stella zoe leah hailey everly addison
aubrey ivy natalia savannah brooklyn bella claire skylar lucy paisley anna caroline genesis aaliyah
kennedy kinsley allison maya sadie madelyn eleanor valentina naomi elena aubree willow emery
quinn autumn piper ruby serenity eva jade kylie delilah isla josephine athena vivian adeline
clara peyton nevaeh rylee melanie cora arya sophie lydia brielle liliana gabriella jasmine mackenzie
mila sienna eliana juliana maeve rose margot freya poppy florence evie matilda phoebe imogen erin
isabel esme ellie-mae harriet rosie edith elsie ada mabel ivy bonnie beatrice annabelle eliza
georgia jessica tilly lola niamh aoife ciara saoirse siobhan roisin orla sinead aisling caoimhe
fiona isla morag kirsty eilidh catriona mairi shona ailsa
guadalupe rosa carmen ana lucia sofia valeria ximena daniela mariana fernanda gabriela alejandra
andrea paula adriana veronica patricia beatriz claudia silvia leticia monica raquel pilar marta
elena cristina irene lorena yolanda esperanza dolores consuelo graciela isabel lourdes marisol
mercedes miriam norma paola renata rocio rosario soledad susana teresa yesenia araceli brenda
catalina esmeralda julieta luciana martina milagros noemi ofelia perla
fatima aisha maryam zainab khadija amina layla noor yasmin hana sara leila salma rania dina huda
iman lina mariam nadia rana reem samira yara zahra farah ghada hiba jana malak nour rasha sana
priya anjali pooja neha kavya divya sneha shreya ananya riya aditi deepika meera nisha rekha sunita
anita kavita lakshmi radha sita uma geeta asha usha shobha vidya swati preeti jyoti manisha payal
aishwarya isha tanvi diya saanvi aadhya kiara myra anika ishita
mei ling xiu ying fang hong juan li na yan yun hua jing qing min lan xia yu zhi hui
yuki sakura hana yui aoi rin mio akari sora yuna haruka naomi ayaka emi kaori keiko mariko michiko
sachiko tomoko yoko yumi junko kumiko megumi noriko
minji seoyeon jiwoo hayoon soyeon jiyoung eunji hyejin sujin yuna jimin
chiamaka ngozi adaeze amara chioma ifeoma nneka oluchi folake funmilayo yetunde abena akosua ama
efua esi adwoa nia imani zuri amani wanjiru wambui achieng thandiwe nomvula lindiwe zanele busisiwe
ingrid astrid sigrid freja maja ida elin linnea ebba saga alva greta heidi liesel anneliese birgit
gisela helga ilse katrin petra ursula monika sabine claudia sandra stefanie julia lena lea hanna
johanna katharina franziska magdalena agnieszka katarzyna malgorzata joanna ewa barbara zofia
natalia olga tatiana svetlana irina ekaterina anastasia ludmila oksana yulia galina marina daria
alina ksenia polina vera nina valentina giulia chiara francesca alessia martina sara federica
silvia valentina elisa beatrice alice aurora ginevra camille chloe manon lea ines juliette louise
margaux oceane clemence celine amelie aurelie elodie emilie helene isabelle juliette nathalie sylvie
sophie valerie veronique brigitte chantal genevieve monique nicole
aiden brayden jaden kaden zayden hayden braxton paxton jaxton ryker tucker waylon gunner kash
marshall jasper dawson knox crew walker holden rhett archer beau colt tate
jayla kayla makayla mikayla jaylen tatiana destiny diamond precious tiana shanice latoya keisha
tamika ebony aaliyah imani jada jalen jamal darnell tyrone deshawn demetrius terrell lamar dante
andre marquis reginald cedric darius malik jermaine rashad tremaine devonte kendrick
hank buck chuck clint curt dale dean don doug earl ed eddie ernie floyd fred gene glen glenn gus hal
herb jim jimmy joey johnny jon josh ken kenny kirk lance lee len lenny les lou mac matt mike mitch
nate ned nick norm pat pete phil ralph randy ray rich rick rob ron russ sam sid stan steve ted tim tom
tommy tony vic vince walt wes will zach abby addie allie annie becky beth betsy bev cathy cindy
connie debbie dot elle ellie fran gail gwen jan jen jenny jill jo joanne kate kathy katie kim kris
lena liz lynn maggie mandy meg molly nan nell pam patty peg peggy penny polly sally sandy shelly
sue susie tammy terri tina toni trish val vicky wendy
alan alvin andy barry ben bernard bill bob brad brett byron calvin chad clarence clayton cliff clyde
cole craig curtis dan dana daryl derek derrick dexter don dwayne dwight edgar edwin elliott elmer
ernest everett felix floyd forrest franklin gavin gilbert glen gordon grant guy harvey herbert herman
howard irvin jared jay jeff jerome jess jim joel johnny julius kirk kurt lamar leon leonard leroy
lester lewis lloyd lonnie luther marc marion marlon marshall marvin maurice melvin milton mitchell
morris neal nelson norman otis perry preston quentin randall reginald rex rodney roland ronnie ross
rudy sherman sidney spencer stanley stuart terrance theodore todd travis troy tyrone vernon wade
wallace warren wendell wesley wilbur willard winston
abigail adele agnes alexandra alicia alison allison alma alyssa amanda amelia angelina anne annette
antoinette april arlene audrey barbara bernice bertha bethany beverly blanche bonnie brianna bridget
camille candace carla carmen carrie cassandra cecilia celia charlene cheryl christy claire claudia
colleen constance courtney crystal daisy darlene dawn deanna delores desiree dianne dolores dora
edna eileen elaine ella ellen eloise elsa erica erika esther ethel eunice faith felicia florence
francine gail geneva georgia geraldine gertrude gina ginger gladys glenda gwendolyn harriet hattie
hilda holly hope ida inez irene iris jana jane janie jeanne jeannette jenna jennie jessie jill jo
joann jodi johanna josefina joy juanita julia june kara karla katrina kristen kristin kristina lana
lara latoya leona leslie lillian lois loretta lorraine lucille lula lynda lynette mabel mae marcia
margie marguerite marian marianne marjorie marlene marsha mattie maureen maxine melinda melody
mildred minnie miranda misty myrtle nadine nellie nina nora olga opal pauline pearl peggy priscilla
regina renee rhonda rita roberta robin rochelle rosalie rosemary roxanne ruby sabrina sally sheila
shelley sherry sonia sonya stacey stacy sue suzanne sylvia tabitha tamara tanya tara tasha tonya
tracey tracy vanessa velma vera verna vickie viola wanda wilma yolanda yvette yvonne
abel abram adan adriel ahmad aidan alden aldo alec alfie alfonso alvaro amari ambrose amos angelo anson
archie ari arlo arnav atticus augustus barrett barron basil benedict benny bernie bert blaine brady
branden brendan brent brock broderick bronson bryce cade caiden callan calum carmelo carson cassius cecil
chris clement clifford clifton cody colby colin conor conrad cornelius cyrus damon dane darian darren
darryl deacon delbert demarcus derick desmond devon dillon dimitri dominick donovan dorian drake duane
dustin eamon edison edmund efrain eliot elliot emanuel emerson emil emile emmanuel enoch ephraim erick
errol ezekiel fletcher flynn francis franco frederick gael garrett garrison geoffrey gerard gideon gino
grady gregg hamid harlan heath hezekiah horace humberto isaiah ismael israel jairo jake jakob jamie
jarrett jefferson jeffery jerald jethro johnathan johnnie jonah josue judah justus kaleb kane kasey
keaton keegan keenan kellan kelvin kendall kieran killian kobe kristian lamont landen leland lennox
leonel lionel lowell lucian lyle mack maddox malachi manny marcel marcelo marcos mariano marty mathew
maxwell mekhi mickey milo monty mose moses nathanael nehemiah nico noel norbert odin omari osvaldo otto
percy quincy ramiro reggie reid reuben rhys ricky rigoberto rocco rocky roderick romeo rory royce rudolph
rufus ryland santino seth shane shaun shawn sheldon simeon simon solomon sonny sullivan tanner thaddeus
theo thor titus toby tod trent trenton trevor trey ty tyson ulysses uriel valentino vance vaughn vicente
virgil wiley xander yahir yosef zachariah zack zaiden zane zeke zion
abbie adalyn adrienne aileen aimee alana alanna alissa aliyah alondra alyson amaya amira anahi angelica
angie aniyah annabel annabella annalise annika antonia ariana arianna ashlyn aspen aurelia ayla aylin
beatrix belinda belen bernadette bettie bianca blair bridgette brittney brooke brooklynn bryanna caitlin
callie calliope camryn candice cara carissa carly carolina cassidy cataleya charlize cheyenne clarissa
colette dakota dalia daphne dayana delaney delia desirae dominique dulce eden elise emmy estelle
evangeline fabiola felicity frida gemma georgina gia giselle giuliana hadley haley hallie haylee helena
hermione hillary isabela itzel ivana jaelyn jaida janelle janessa jaqueline jazmin jazmine jillian
jimena jocelyn jolene jordyn josie julianna juliet kaia kailey kaitlyn kali kamila karina kassandra
katelyn katharine katy kaylee keira kelsey kendra kenzie khloe kiana kira kourtney kristy kyla lacey
laila leilani lexi lila lilah lilly lindsay lindsey lizbeth lorelai louisa luz lyla macy madeleine
madeline madilyn makenna malia mallory mara marcela margarita mariah marisa marissa maritza mckenna
melina meredith micaela mikaela millie mira natasha nayeli nicola nikki noelle nola nyla odette ophelia
paige paulina pippa raegan raelynn raven reagan rebekah reina rhea rihanna robyn rosalind samara sasha
selena selina serena shannon shayla shelby sheridan sierra simone skye sloane talia tatum tegan tessa
thalia thea tiffany vivienne whitney willa xiomara zara zelda
abhinav adil afsana ahmet aleksandr alibek anh arash aryan ayumi baptiste bao cheng dae duc emre esra
farhan fatemeh giorgio gulnara hiro hoang huong ilya jae jia joon kamala kazuo keisuke khanh kimiko
kirill krisztina kyung lian linh mai masako mehmet minh nam ngoc nikita nobu parisa phuong quang ryota
seo shiro soo sung tae takeshi thanh trang tuan wen yoshi berk cem deniz elif emine fatma hatice kemal
murat ozan selin serkan zeynep aziz bassam fadia hadi haidar hala hanan issa jamila kamil lubna maha
mahdi marwan mona munir nadim nasir nizar qasim rafiq saad sabah sahar saleh samar shadi suha tamer wael
yasser youssef zakaria zaki zeinab ayodele bongani chukwuma ebele ifeanyi kelechi kayode lerato mpho
naledi nkechi nomsa olumide sade sibusiso temitope tumelo uchenna priyanka aishwarya
`;

/** Lower-case given names, de-duplicated. */
export const FIRST_NAME_LIST: readonly string[] = [...new Set(FIRST_NAMES.split(/\s+/).filter((w) => w.length > 0))];
