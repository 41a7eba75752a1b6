/**
 * Well-known registrable domains: links to these (and to their subdomains) are not "unknown links".
 *
 * Source: curated by hand from widely published top-site rankings (the kind of lists Tranco, Cloudflare
 * Radar and similar rankings publish), restricted to registrable domains (eTLD+1 under the public
 * suffix list, checked with `tldts` in the unit tests) of: search and portals, the big platform
 * companies, code hosting, package registries and CDNs, developer documentation, cloud providers,
 * social networks and messaging, news and reference, finance and payments, commerce, government
 * and international bodies, universities, and common developer services (badges, CI, funding).
 * 1,096 entries at the time of writing (the unit test asserts at least 1,000, all unique and
 * registrable; docs/detectors-contextual.md quotes the size).
 *
 * Deliberately NOT listed: user-content hosting platforms whose subdomains anyone can register
 * (github.io, vercel.app, herokuapp.com, blogspot.com, …). tldts resolves those with the private
 * section of the public suffix list, so `someone.github.io` is its own registrable domain and unknown.
 * Listing a private suffix itself (githubusercontent.com) trusts every host under it, deliberately.
 * URL shorteners are listed separately (link-lists.ts) and are never "well known": they hide the target.
 *
 * Kept as a TypeScript module (not a .txt file) so it ships in dist/ with the compiled code.
 */
const WELL_KNOWN = `
google.com google.co.uk google.de google.fr google.ca google.co.in google.co.jp google.com.au google.com.br
google.es google.it google.nl google.pl google.ch google.se google.com.mx google.ru google.co.kr
bing.com yahoo.com yahoo.co.jp duckduckgo.com baidu.com yandex.ru yandex.com naver.com ask.com ecosia.org
startpage.com brave.com aol.com msn.com
youtube.com youtu.be gmail.com googleapis.com gstatic.com googleusercontent.com googlevideo.com ggpht.com
googlesource.com googleblog.com withgoogle.com web.dev android.com chromium.org chrome.com blogger.com
golang.org go.dev tensorflow.org kaggle.com deepmind.com deepmind.google blog.google google.dev firebase.com
googletagmanager.com google-analytics.com doubleclick.net recaptcha.net
microsoft.com windows.com office.com office365.com outlook.com hotmail.com live.com azure.com
microsoftonline.com onedrive.com skype.com xbox.com linkedin.com github.com githubusercontent.com
githubassets.com github.blog github.dev visualstudio.com vscode.dev typescriptlang.org aka.ms nuget.org
asp.net live.net office.net powerbi.com dynamics.com minecraft.net bing.net windowsupdate.com msft.net
apple.com icloud.com me.com mac.com itunes.com swift.org webkit.org cdn-apple.com
amazon.com amazon.co.uk amazon.de amazon.fr amazon.co.jp amazon.ca amazon.in amazon.it amazon.es
amazon.com.au amazon.com.br amazon.nl amazon.com.mx amazonaws.com amazon.dev amzn.to audible.com
twitch.tv imdb.com zappos.com wholefoodsmarket.com ring.com primevideo.com goodreads.com awsstatic.com
facebook.com fb.com fb.me messenger.com instagram.com whatsapp.com whatsapp.net wa.me threads.net
meta.com oculus.com fbcdn.net react.dev reactjs.org pytorch.org llama.com meta.ai
twitter.com x.com twimg.com reddit.com redd.it redditmedia.com pinterest.com tumblr.com tiktok.com
snapchat.com discord.com discord.gg discordapp.com telegram.org t.me signal.org mastodon.social bsky.app
quora.com medium.com substack.com vk.com weibo.com wechat.com qq.com line.me kakao.com flickr.com
vimeo.com dailymotion.com soundcloud.com spotify.com deezer.com last.fm bandcamp.com patreon.com
producthunt.com ycombinator.com stackoverflow.com stackexchange.com superuser.com serverfault.com
askubuntu.com mathoverflow.net slack.com zoom.us zoom.com meetup.com eventbrite.com nextdoor.com
yelp.com tripadvisor.com glassdoor.com indeed.com xing.com viber.com jitsi.org matrix.org element.io
mattermost.com gitter.im libera.chat
gitlab.com bitbucket.org sourceforge.net codeberg.org gitee.com sr.ht launchpad.net kernel.org
git-scm.com npmjs.com npmjs.org yarnpkg.com pnpm.io jsdelivr.net unpkg.com cdnjs.com cloudflare.com
pypi.org pythonhosted.org python.org rubygems.org ruby-lang.org crates.io rust-lang.org docs.rs
maven.org apache.org gradle.org packagist.org php.net hex.pm hexdocs.pm cpan.org metacpan.org
r-project.org conda.io anaconda.com anaconda.org docker.com docker.io quay.io gcr.io ghcr.io k8s.io
kubernetes.io helm.sh terraform.io hashicorp.com vagrantup.com ansible.com chef.io puppet.com
jenkins.io circleci.com travis-ci.com travis-ci.org codecov.io coveralls.io sonarcloud.io
sonarqube.org snyk.io renovatebot.com readthedocs.org readthedocs.io rtfd.io mkdocs.org sphinx-doc.org
gitbook.com swagger.io openapis.org json-schema.org regex101.com jsfiddle.net codepen.io
codesandbox.io stackblitz.com replit.com glitch.com jsbin.com observablehq.com huggingface.co hf.co
paperswithcode.com arxiv.org openreview.net semanticscholar.org researchgate.net acm.org ieee.org
springer.com nature.com sciencedirect.com elsevier.com wiley.com jstor.org biorxiv.org medrxiv.org
ssrn.com doi.org orcid.org zenodo.org figshare.com overleaf.com latex-project.org ctan.org
wolfram.com wolframalpha.com mathworks.com desmos.com geogebra.org jupyter.org numpy.org scipy.org
pydata.org matplotlib.org scikit-learn.org keras.io opencv.org nodejs.org deno.land deno.com bun.sh
vuejs.org angular.io angular.dev svelte.dev nextjs.org nuxt.com vitejs.dev vite.dev babeljs.io
eslint.org prettier.io jestjs.io mochajs.org vitest.dev playwright.dev cypress.io selenium.dev
tailwindcss.com getbootstrap.com jquery.com lodash.com d3js.org threejs.org expressjs.com fastify.dev
fastify.io nestjs.com koajs.com socket.io graphql.org apollographql.com prisma.io typeorm.io
sequelize.org mongoosejs.com redis.io postgresql.org mysql.com mariadb.org mongodb.com sqlite.org
elastic.co rabbitmq.com nginx.org nginx.com caddyserver.com haproxy.org traefik.io envoyproxy.io
istio.io linkerd.io grafana.com prometheus.io datadoghq.com newrelic.com sentry.io pagerduty.com
splunk.com honeycomb.io opentelemetry.io jaegertracing.io djangoproject.com palletsprojects.com
tiangolo.com rubyonrails.org laravel.com symfony.com spring.io quarkus.io micronaut.io kotlinlang.org
scala-lang.org haskell.org erlang.org elixir-lang.org clojure.org julialang.org rstudio.com posit.co
ocaml.org dart.dev flutter.dev llvm.org cmake.org gnu.org fsf.org opensource.org creativecommons.org
linuxfoundation.org cncf.io ubuntu.com canonical.com debian.org fedoraproject.org redhat.com
centos.org archlinux.org gentoo.org alpinelinux.org kali.org opensuse.org suse.com freebsd.org
openbsd.org netbsd.org linuxmint.com raspberrypi.com raspberrypi.org arduino.cc brew.sh macports.org
chocolatey.org mozilla.org firefox.com mozilla.net thunderbird.net w3.org whatwg.org ietf.org
rfc-editor.org iana.org icann.org unicode.org ecma-international.org iso.org caniuse.com webaim.org
letsencrypt.org openssl.org openssh.com wireguard.com tailscale.com zerotier.com fastly.com
akamai.com vercel.com netlify.com heroku.com render.com fly.io railway.app digitalocean.com
linode.com vultr.com hetzner.com ovh.com ovhcloud.com scaleway.com oracle.com ibm.com
alibabacloud.com aliyun.com tencentcloud.com salesforce.com sap.com servicenow.com workday.com
atlassian.com jira.com trello.com notion.so asana.com monday.com clickup.com airtable.com figma.com
miro.com canva.com sketch.com adobe.com behance.net dribbble.com webex.com gotomeeting.com
calendly.com docusign.com docusign.net dropbox.com box.com wetransfer.com evernote.com
1password.com lastpass.com bitwarden.com okta.com auth0.com duo.com twilio.com sendgrid.com
mailchimp.com hubspot.com zendesk.com intercom.com freshworks.com mailgun.com postmarkapp.com
stripe.com paypal.com paypal.me venmo.com squareup.com square.com wise.com revolut.com klarna.com
adyen.com braintreepayments.com coinbase.com binance.com kraken.com visa.com mastercard.com
americanexpress.com discover.com chase.com bankofamerica.com wellsfargo.com citi.com citibank.com
capitalone.com usbank.com pnc.com hsbc.com hsbc.co.uk barclays.co.uk barclays.com lloydsbank.com
natwest.com santander.com ing.com db.com ubs.com goldmansachs.com morganstanley.com jpmorgan.com
fidelity.com vanguard.com schwab.com robinhood.com etrade.com nasdaq.com nyse.com bloomberg.com
reuters.com wsj.com ft.com economist.com cnbc.com marketwatch.com forbes.com fortune.com
businessinsider.com investopedia.com morningstar.com
nytimes.com washingtonpost.com theguardian.com bbc.com bbc.co.uk cnn.com foxnews.com nbcnews.com
cbsnews.com go.com npr.org pbs.org apnews.com usatoday.com latimes.com chicagotribune.com
bostonglobe.com politico.com axios.com theatlantic.com newyorker.com time.com newsweek.com vox.com
theverge.com wired.com arstechnica.com techcrunch.com engadget.com gizmodo.com mashable.com zdnet.com
cnet.com venturebeat.com thenextweb.com slashdot.org theregister.com hackernoon.com dev.to
hashnode.com lwn.net phoronix.com tomshardware.com anandtech.com pcmag.com pcworld.com macrumors.com
9to5mac.com 9to5google.com androidcentral.com xda-developers.com aljazeera.com dw.com france24.com
lemonde.fr lefigaro.fr spiegel.de zeit.de faz.net sueddeutsche.de bild.de elpais.com elmundo.es
corriere.it repubblica.it nzz.ch independent.co.uk telegraph.co.uk dailymail.co.uk thetimes.co.uk
sky.com itv.com channel4.com abc.net.au smh.com.au cbc.ca theglobeandmail.com thestar.com
japantimes.co.jp nhk.or.jp asahi.com scmp.com straitstimes.com indiatimes.com hindustantimes.com
thehindu.com ndtv.com euronews.com afp.com propublica.org theintercept.com huffpost.com buzzfeed.com
vice.com salon.com slate.com thedailybeast.com nationalgeographic.com scientificamerican.com
newscientist.com science.org pnas.org cell.com thelancet.com nejm.org bmj.com jamanetwork.com
who.int un.org unicef.org worldbank.org imf.org oecd.org wto.org nato.int europa.eu
canada.ca service-public.fr bund.de bundesregierung.de admin.ch rijksoverheid.nl
usps.com ups.com fedex.com dhl.com dhl.de royalmail.com auspost.com.au
coursera.org edx.org udemy.com udacity.com khanacademy.org codecademy.com freecodecamp.org
w3schools.com geeksforgeeks.org tutorialspoint.com leetcode.com hackerrank.com codewars.com
exercism.org brilliant.org duolingo.com quizlet.com chegg.com coursehero.com
wikipedia.org wikimedia.org wikidata.org wiktionary.org wikibooks.org wikiquote.org wikivoyage.org
wikisource.org mediawiki.org wikihow.com fandom.com britannica.com merriam-webster.com dictionary.com
thesaurus.com oed.com cambridge.org collinsdictionary.com urbandictionary.com archive.org
gutenberg.org openlibrary.org scribd.com slideshare.net issuu.com
ebay.com ebay.co.uk ebay.de walmart.com target.com bestbuy.com costco.com homedepot.com lowes.com
ikea.com etsy.com aliexpress.com alibaba.com taobao.com tmall.com jd.com rakuten.com rakuten.co.jp
mercadolibre.com shopify.com wayfair.com macys.com nordstrom.com kohls.com gap.com hm.com zara.com
uniqlo.com nike.com adidas.com newegg.com bhphotovideo.com zalando.de otto.de asos.com argos.co.uk
tesco.com sainsburys.co.uk johnlewis.com currys.co.uk booking.com expedia.com airbnb.com hotels.com
kayak.com skyscanner.net trivago.com agoda.com uber.com lyft.com doordash.com grubhub.com
ubereats.com instacart.com deliveroo.co.uk just-eat.co.uk opentable.com netflix.com hulu.com
disneyplus.com disney.com hbomax.com max.com paramountplus.com peacocktv.com crunchyroll.com
steampowered.com steamcommunity.com epicgames.com ea.com blizzard.com battle.net playstation.com
nintendo.com roblox.com unity.com unity3d.com unrealengine.com itch.io gog.com humblebundle.com
ign.com gamespot.com polygon.com kotaku.com pcgamer.com rockstargames.com ubisoft.com riotgames.com
leagueoflegends.com valvesoftware.com speedtest.net weather.com accuweather.com timeanddate.com
openstreetmap.org mapbox.com here.com waze.com zillow.com redfin.com realtor.com craigslist.org
gumtree.com rightmove.co.uk autotrader.com cars.com carfax.com kbb.com tesla.com ford.com
toyota.com bmw.com mercedes-benz.com vw.com honda.com samsung.com sony.com lg.com dell.com hp.com
lenovo.com asus.com acer.com intel.com amd.com nvidia.com arm.com qualcomm.com cisco.com juniper.net
vmware.com broadcom.com paloaltonetworks.com fortinet.com crowdstrike.com sophos.com kaspersky.com
norton.com mcafee.com avast.com malwarebytes.com virustotal.com shodan.io haveibeenpwned.com
owasp.org mitre.org cve.org exploit-db.com hackerone.com bugcrowd.com portswigger.net
metasploit.com wireshark.org nmap.org
openai.com chatgpt.com oaistatic.com anthropic.com claude.ai claude.com perplexity.ai mistral.ai
cohere.com cohere.ai deepseek.com x.ai character.ai midjourney.com stability.ai runwayml.com
elevenlabs.io replicate.com together.ai groq.com fireworks.ai anyscale.com langchain.com
llamaindex.ai pinecone.io weaviate.io qdrant.tech wandb.ai mlflow.org ray.io databricks.com
snowflake.com getdbt.com tableau.com looker.com metabase.com supabase.com planetscale.com neon.tech
cockroachlabs.com timescale.com influxdata.com clickhouse.com duckdb.org
wordpress.com wordpress.org wp.com wix.com squarespace.com weebly.com godaddy.com namecheap.com
gandi.net hover.com porkbun.com digicert.com sectigo.com globalsign.com verisign.com gravatar.com
imgur.com giphy.com tenor.com unsplash.com pexels.com pixabay.com shutterstock.com gettyimages.com
istockphoto.com flaticon.com fontawesome.com thenounproject.com icons8.com
protonmail.com proton.me tutanota.com fastmail.com zoho.com gmx.com gmx.de web.de mail.ru hey.com
grammarly.com deepl.com reverso.net linguee.com surveymonkey.com typeform.com jotform.com
constantcontact.com hootsuite.com buffer.com
mit.edu stanford.edu harvard.edu berkeley.edu cmu.edu caltech.edu princeton.edu yale.edu columbia.edu
cornell.edu uchicago.edu upenn.edu umich.edu washington.edu utexas.edu illinois.edu gatech.edu ucla.edu
ucsd.edu nyu.edu jhu.edu duke.edu ox.ac.uk cam.ac.uk imperial.ac.uk ucl.ac.uk ed.ac.uk ethz.ch
epfl.ch tum.de mpg.de inria.fr cnrs.fr utoronto.ca mcgill.ca ubc.ca uwaterloo.ca unimelb.edu.au
sydney.edu.au anu.edu.au u-tokyo.ac.jp kyoto-u.ac.jp nus.edu.sg ntu.edu.sg tsinghua.edu.cn pku.edu.cn
hku.hk kaist.ac.kr iitb.ac.in cdc.gov nih.gov nasa.gov irs.gov ssa.gov usa.gov whitehouse.gov
shields.io badgen.net opencollective.com tidelift.com appveyor.com codeclimate.com deepscan.io lgtm.com
socket.dev jsr.io esm.sh skypack.dev bundlephobia.com packagephobia.com npm-stat.com npmtrends.com
semver.org standardjs.com saucelabs.com browserstack.com jetbrains.com gitpod.io sourcegraph.com
githubstatus.com fossa.com liberapay.com ko-fi.com buymeacoffee.com nodei.co npm.im protobuf.dev
chaijs.com browserify.org webpack.js.org google.cn
example.com example.org example.net
`;

export const WELL_KNOWN_DOMAINS: readonly string[] = WELL_KNOWN.split(/\s+/).filter((d) => d.length > 0);
