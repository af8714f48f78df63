"""The order words of each language pbem speaks besides English (issue 15).

English order words are always understood (:mod:`moderator.orders.vocabulary`);
the words of the language in force (``es``, ``de``, ``cs``, ``zh``) are understood
too.  This module is only data: what :mod:`moderator.orders.parser` reads.

FOR TRANSLATORS: :data:`CANONICAL` gives, per language, the ONE word the order
guide (``help``), the examples and the suggestions ("did you mean ...") use for
each verb, command and card; :data:`EXAMPLES` are complete order lines written
with them (a test checks that each reads as the English line beside it, and that
it is exactly what :func:`moderator.orders.parser.format_action` writes).  Use
these words in the translated guides, so that what a player copies from a guide
is what the moderator writes back.  Company abbreviations (``KCC``, ``UP``) and
city ids (``DEN-KCY``) are the same in every language.

:data:`WORDS` lists, per language, every word or phrase a player may write and
the English word it stands for; accents are optional and case does not matter
(the parser folds both before looking a word up, so the keys here may keep their
accents).  Each entry maps a class to ``{English word: [words of the language]}``:

- ``verbs``: the seven orders and ``redraw`` (``build``, ``take``, ``swap``,
  ``invest``, ``discard``, ``pass``, ``start``, ``redraw``);
- ``commands``: mail commands (``help``, ``status``, ``history``, ``rules``,
  ``legal``, ``hint``, ``timezone``, ``vacation``, ``resign``, ``confirm``,
  ``digest``, ``calendar``, ``language``, ``on``/``off`` for ``digest on`` and ``calendar off``, and ``days``/``hours``
  for ``vacation 5 days``);
- ``cards``: track cards (``plain``, ``black``, ``white``, ``black-white``,
  ``joker``) and ``as`` (``joker as white``);
- ``words``: the other order words (``stack``, ``display``, ``none``, ``drawn``,
  ``for`` (``swap MRR for UP``), ``to``/``and``/``from`` between cities,
  ``then``, ``between``), and whole English phrases (``no swap``, ``take none``);
- ``numbers`` and ``ordinals``: ``{word: n}`` (counts of shares, places 1-4 of
  the face-up display);
- ``quiet``: words that mean nothing in an order (articles, "share", "card",
  "train", "please", "I want") -- dropped like English ``the``;
- ``greetings`` and ``sign_offs``: first words of lines that are not orders.

:data:`CITIES` gives city names in the language's own form, only where it differs
from the board's English name (real exonyms: Nueva York; every city in Chinese).

Rules of the table (tests/test_order_languages.py checks them): a word stands for
one English meaning only; no word names a company.  A word that is also a city's id
or part of a city's name (German ``den``, Spanish ``por``, ``el``, ``la``, ``paso``)
is read as the city where it is written as one (``DEN``, ``por-sea``, ``El Paso``,
``LA SFO``; :func:`moderator.orders.lexicon.Lexicon.translate`), else as the word.
"""
from __future__ import annotations

LANGUAGES = ("es", "de", "cs", "zh")
"""The languages with order words of their own (English is always understood)."""

# ====================================================================== canonical

CANONICAL: dict[str, dict[str, str]] = {
    "es": {
        # orders
        "build": "construir", "take": "tomar", "swap": "cambiar", "invest": "invertir",
        "discard": "descartar", "pass": "pasar", "start": "empezar", "redraw": "renovar",
        # order words
        "stack": "pila", "display": "boca arriba", "none": "nada", "take none": "tomar nada",
        "drawn": "robada",
        "plain": "lisa", "black": "negra", "white": "blanca", "black-white": "blanquinegra",
        "joker": "comodín", "as": "como", "for": "por",
        # commands
        "help": "ayuda", "status": "estado", "history": "historial", "rules": "reglas",
        "legal": "jugadas", "hint": "consejo", "timezone": "zona", "vacation": "vacaciones",
        "resign": "abandonar", "confirm": "confirmar", "digest": "resumen", "calendar": "calendario",
        "language": "idioma", "on": "activar", "off": "desactivar", "daily": "diario",
    },
    "de": {
        "build": "bauen", "take": "nehmen", "swap": "tauschen", "invest": "investieren",
        "discard": "abwerfen", "pass": "passen", "start": "starten", "redraw": "neuziehen",
        "stack": "Stapel", "display": "Auslage", "none": "nichts", "take none": "nehmen nichts",
        "drawn": "gezogene",
        "plain": "einfach", "black": "schwarz", "white": "weiß", "black-white": "schwarz-weiß",
        "joker": "Joker", "as": "als", "for": "gegen",
        "help": "Hilfe", "status": "Stand", "history": "Verlauf", "rules": "Regeln",
        "legal": "Züge", "hint": "Tipp", "timezone": "Zeitzone", "vacation": "Urlaub",
        "resign": "aufgeben", "confirm": "bestätigen", "digest": "Sammelmail", "calendar": "Kalender",
        "language": "Sprache", "on": "einschalten", "off": "ausschalten", "daily": "täglich",
    },
    "cs": {
        "build": "postav", "take": "vezmi", "swap": "vyměň", "invest": "investuj",
        "discard": "odhoď", "pass": "pas", "start": "začni", "redraw": "vyměň kartu",
        "stack": "balíček", "display": "nabídka", "none": "nic", "take none": "vezmi nic",
        "drawn": "líznutou",
        "plain": "obyčejná", "black": "černá", "white": "bílá", "black-white": "černobílá",
        "joker": "žolík", "as": "jako", "for": "za",
        "help": "nápověda", "status": "stav", "history": "historie", "rules": "pravidla",
        "legal": "tahy", "hint": "rada", "timezone": "pásmo", "vacation": "dovolená",
        "resign": "vzdávám", "confirm": "potvrdit", "digest": "souhrn", "calendar": "kalendář",
        "language": "jazyk", "on": "zapnout", "off": "vypnout", "daily": "denně",
    },
    "zh": {
        "build": "建造", "take": "拿", "swap": "交换", "invest": "投资",
        "discard": "弃", "pass": "过", "start": "起始", "redraw": "重抽",
        "stack": "股票堆", "display": "场上", "none": "无股票", "take none": "不拿",
        "drawn": "刚抽的",
        "plain": "无条纹", "black": "黑色", "white": "白色", "black-white": "黑白",
        "joker": "百搭", "as": "当作", "for": "换成",
        "help": "帮助", "status": "状态", "history": "历史", "rules": "规则",
        "legal": "合法", "hint": "提示", "timezone": "时区", "vacation": "休假",
        "resign": "认输", "confirm": "确认", "digest": "摘要", "calendar": "日历",
        "language": "语言", "on": "开", "off": "关", "daily": "每天",
    },
}
"""Per language, the one word the guides, examples and suggestions use for each
English order word, command and card (keys: the English words; ``take none`` is
the whole order, since Chinese says it in one word, 不拿)."""

EXAMPLES: dict[str, dict[str, str]] = {
    "es": {
        "build KCC DEN-KCY black; take stack": "construir KCC DEN-KCY negra; tomar pila",
        "build EPRG ELP-PHX joker as white; take KCC; swap MRR":
            "construir EPRG ELP-PHX comodín como blanca; tomar KCC; cambiar MRR",
        "build KCC DEN-KCY plain; take display 2; swap drawn":
            "construir KCC DEN-KCY lisa; tomar boca arriba 2; cambiar robada",
        "build MS JAX-MIA black-white; take none": "construir MS JAX-MIA blanquinegra; tomar nada",
        "invest 2 KCC; discard white": "invertir 2 KCC; descartar blanca",
        "invest KCC UP; discard joker": "invertir KCC UP; descartar comodín",
        "pass; discard white": "pasar; descartar blanca",
        "start KCC": "empezar KCC",
        "redraw white; pass": "renovar blanca; pasar",
    },
    "de": {
        "build KCC DEN-KCY black; take stack": "bauen KCC DEN-KCY schwarz; nehmen Stapel",
        "build EPRG ELP-PHX joker as white; take KCC; swap MRR":
            "bauen EPRG ELP-PHX Joker als weiß; nehmen KCC; tauschen MRR",
        "build KCC DEN-KCY plain; take display 2; swap drawn":
            "bauen KCC DEN-KCY einfach; nehmen Auslage 2; tauschen gezogene",
        "build MS JAX-MIA black-white; take none": "bauen MS JAX-MIA schwarz-weiß; nehmen nichts",
        "invest 2 KCC; discard white": "investieren 2 KCC; abwerfen weiß",
        "invest KCC UP; discard joker": "investieren KCC UP; abwerfen Joker",
        "pass; discard white": "passen; abwerfen weiß",
        "start KCC": "starten KCC",
        "redraw white; pass": "neuziehen weiß; passen",
    },
    "cs": {
        "build KCC DEN-KCY black; take stack": "postav KCC DEN-KCY černá; vezmi balíček",
        "build EPRG ELP-PHX joker as white; take KCC; swap MRR":
            "postav EPRG ELP-PHX žolík jako bílá; vezmi KCC; vyměň MRR",
        "build KCC DEN-KCY plain; take display 2; swap drawn":
            "postav KCC DEN-KCY obyčejná; vezmi nabídka 2; vyměň líznutou",
        "build MS JAX-MIA black-white; take none": "postav MS JAX-MIA černobílá; vezmi nic",
        "invest 2 KCC; discard white": "investuj 2 KCC; odhoď bílá",
        "invest KCC UP; discard joker": "investuj KCC UP; odhoď žolík",
        "pass; discard white": "pas; odhoď bílá",
        "start KCC": "začni KCC",
        "redraw white; pass": "vyměň kartu bílá; pas",
    },
    "zh": {
        "build KCC DEN-KCY black; take stack": "建造 KCC DEN-KCY 黑色; 拿 股票堆",
        "build EPRG ELP-PHX joker as white; take KCC; swap MRR":
            "建造 EPRG ELP-PHX 百搭 当作 白色; 拿 KCC; 交换 MRR",
        "build KCC DEN-KCY plain; take display 2; swap drawn":
            "建造 KCC DEN-KCY 无条纹; 拿 场上 2; 交换 刚抽的",
        "build MS JAX-MIA black-white; take none": "建造 MS JAX-MIA 黑白; 不拿",
        "invest 2 KCC; discard white": "投资 2 KCC; 弃 白色",
        "invest KCC UP; discard joker": "投资 KCC UP; 弃 百搭",
        "pass; discard white": "过; 弃 白色",
        "start KCC": "起始 KCC",
        "redraw white; pass": "重抽 白色; 过",
    },
}
"""Per language, English canonical order lines and the same orders in the
language's canonical words (as the guides should show them)."""

# ====================================================================== all words

WORDS: dict[str, dict[str, object]] = {
    # ------------------------------------------------------------------ Spanish
    "es": {
        "verbs": {
            "build": ["construir", "construye", "construyo", "construya", "construid",
                      "colocar", "coloca", "coloco", "poner", "pon", "pongo", "edificar"],
            "take": ["tomar", "toma", "tomo", "tome", "coger", "coge", "cojo", "robar", "roba",
                     "robo", "sacar", "saca", "saco", "elegir", "elijo", "agarrar", "agarro"],
            "swap": ["cambiar", "cambia", "cambio", "intercambiar", "intercambia",
                     "intercambio", "canjear", "canjeo", "devolver", "devuelvo"],
            "invest": ["invertir", "invierte", "invierto", "inversion", "invertimos"],
            "discard": ["descartar", "descarta", "descarto", "descarte", "tirar"],
            "pass": ["pasar", "paso", "me paso", "yo paso"],
            "start": ["empezar", "empiezo", "empieza", "comenzar", "comienzo", "iniciar",
                      "inicial", "inversion inicial", "salida"],
            "redraw": ["renovar", "renuevo", "volver a robar", "vuelvo a robar", "robar otra"],
        },
        "commands": {
            "help": ["ayuda", "ayudame", "socorro"], "status": ["estado", "situacion"],
            "history": ["historial", "historia", "registro"], "rules": ["reglas", "reglamento"],
            "legal": ["jugadas", "jugadas legales", "opciones", "legales"],
            "hint": ["consejo", "pista", "sugerencia"],
            "timezone": ["zona", "zona horaria", "huso horario", "huso"],
            "vacation": ["vacaciones", "ausencia"],
            "resign": ["abandonar", "abandono", "me rindo", "rendirse", "retirarse", "me retiro"],
            "confirm": ["confirmar", "confirmo", "confirma", "confirmado", "confirmada"],
            "digest": ["resumen", "resumenes"], "daily": ["diario", "diaria", "cada dia"],
            "calendar": ["calendario", "agenda"],
            "language": ["idioma", "lengua"],
            "on": ["activar", "activo", "activado"],
            "off": ["desactivar", "desactivo", "desactivado", "fin", "vuelvo", "he vuelto"],
            "days": ["dias", "dia"], "hours": ["horas", "hora"],
        },
        "cards": {
            "plain": ["lisa", "liso", "lisas", "sin rayas", "sin raya", "normal", "simple"],
            "black": ["negra", "negro", "negras"],
            "white": ["blanca", "blanco", "blancas"],
            "black-white": ["blanquinegra", "blanquinegro", "blanco y negro", "blanca y negra",
                            "negro y blanco", "negra y blanca", "blanco-negro", "bn"],
            "joker": ["comodin", "comodines"],
            "as": ["como"],
        },
        "words": {
            "stack": ["pila", "mazo", "monton", "boca abajo", "a ciegas", "oculta"],
            "display": ["boca arriba", "visible", "visibles", "expuesta", "posicion", "fila"],
            "none": ["nada", "ninguna", "ninguno"],
            "drawn": ["robada", "robado", "recien robada", "sacada"],
            "for": ["por"],
            "to": ["hasta"], "and": ["y", "e", "tambien"], "from": ["desde"],
            "between": ["entre"],
            "then": ["luego", "despues", "y luego", "entonces"],
            "no swap": ["sin cambiar", "no cambio", "sin cambio", "no cambiar"],
        },
        "numbers": {"uno": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6,
                    "siete": 7, "ocho": 8, "nueve": 9, "diez": 10},
        "ordinals": {"primera": 1, "primero": 1, "segunda": 2, "segundo": 2, "tercera": 3,
                     "tercero": 3, "cuarta": 4, "cuarto": 4, "1a": 1, "2a": 2, "3a": 3,
                     "4a": 4, "1o": 1, "2o": 2, "3o": 3, "4o": 4},
        "quiet": ["el", "la", "los", "las", "a", "un", "una", "unas", "unos", "de", "del", "mi",
                  "mis", "accion", "acciones", "carta", "cartas", "tarjeta", "tarjetas",
                  "vias", "via", "tramo", "tren", "con", "en", "al", "para", "usando", "compania",
                  "quiero", "yo", "voy a", "jugada", "turno", "ordenes", "orden", "mano",
                  "partida", "juego", "esta",
                  "por favor", "porfa", "pf", "ahora", "pues", "bueno", "vale"],
        "greetings": ["hola", "buenas", "buenos dias", "buenas tardes", "saludos", "un saludo",
                      "gracias", "muchas gracias", "abrazos", "un abrazo", "hasta luego",
                      "adios", "chao", "suerte", "atentamente", "querido", "queridos",
                      "estimados"],
        "sign_offs": ["gracias", "muchas gracias", "saludos", "un saludo", "abrazos",
                      "un abrazo", "hasta luego", "adios", "chao", "atentamente", "suerte"],
    },
    # ------------------------------------------------------------------ German
    "de": {
        "verbs": {
            "build": ["bauen", "baue", "bau", "baut", "lege strecke", "setzen", "setze"],
            "take": ["nehmen", "nehme", "nimm", "ziehen", "ziehe", "zieh", "holen", "hole"],
            "swap": ["tauschen", "tausche", "tausch", "umtauschen", "eintauschen",
                     "zuruckgeben", "gib zuruck"],
            "invest": ["investieren", "investiere", "investier", "investition", "lege aus",
                       "auslegen"],
            "discard": ["abwerfen", "abwerfe", "wirf ab", "werfe ab", "wirf", "werfe",
                        "ablegen", "lege ab", "leg ab", "lege", "leg", "wegwerfen",
                        "verwerfen"],
            "pass": ["passen", "passe", "pass", "aussetzen"],
            "start": ["starten", "starte", "start", "startinvestition", "startaktie",
                      "beginnen", "beginne", "anfangen"],
            "redraw": ["neuziehen", "neu ziehen", "ziehe neu", "nachziehen", "ersetzen"],
        },
        "commands": {
            "help": ["hilfe", "anleitung"], "status": ["stand", "spielstand", "zustand"],
            "history": ["verlauf", "protokoll", "spielverlauf"],
            "rules": ["regeln", "spielregeln", "regel"],
            "legal": ["zuge", "moglichkeiten", "erlaubt"],
            "hint": ["tipp", "hinweis", "vorschlag", "rat"],
            "timezone": ["zeitzone"], "vacation": ["urlaub", "ferien", "abwesend"],
            "resign": ["aufgeben", "gebe auf", "ich gebe auf"],
            "confirm": ["bestatigen", "bestatige", "bestatigt"],
            "digest": ["sammelmail", "zusammenfassung"], "daily": ["taglich", "einmal taglich"],
            "calendar": ["kalender", "terminkalender"],
            "language": ["sprache"],
            "on": ["einschalten", "anschalten", "aktivieren"],
            "off": ["aus", "ausschalten", "deaktivieren", "ende", "zuruck"],
            "days": ["tage", "tag", "tagen"], "hours": ["stunden", "stunde"],
        },
        "cards": {
            "plain": ["einfach", "einfache", "einfachen", "einfacher", "einfaches",
                      "ohne streifen", "normal", "normale", "normalen", "blank", "leer",
                      "leere", "grau", "graue", "grauen"],
            "black": ["schwarz", "schwarze", "schwarzen", "schwarzes", "schwarzer", "schwarzem"],
            "white": ["weiss", "weisse", "weissen", "weisses", "weisser", "weissem"],
            "black-white": ["schwarz-weiss", "schwarzweiss", "schwarz-weisse",
                            "schwarzweisse", "schwarz und weiss", "schwarz/weiss",
                            "weiss-schwarz", "sw"],
            "joker": ["joker", "jokerkarte", "jokers"],
            "as": ["als"],
        },
        "words": {
            "stack": ["stapel", "nachziehstapel", "verdeckt", "verdeckte", "blind"],
            "display": ["auslage", "offene", "offenen", "position"],
            "none": ["nichts", "keine", "keinen"],
            "drawn": ["gezogene", "gezogen", "gerade gezogene", "neu gezogene"],
            "for": ["gegen"],
            "to": ["nach", "zu"], "and": ["und", "sowie"], "from": ["von"],
            "between": ["zwischen"],
            "then": ["dann", "danach", "und dann"],
            "no swap": ["kein tausch", "nicht tauschen", "tausche nicht"],
        },
        "numbers": {"eins": 1, "zwei": 2, "drei": 3, "vier": 4, "funf": 5, "sechs": 6,
                    "sieben": 7, "acht": 8, "neun": 9, "zehn": 10},
        "ordinals": {"erste": 1, "ersten": 1, "erster": 1, "zweite": 2, "zweiten": 2,
                     "zweiter": 2, "dritte": 3, "dritten": 3, "dritter": 3, "vierte": 4,
                     "vierten": 4, "vierter": 4},
        "quiet": ["der", "die", "das", "den", "dem", "des", "ein", "eine", "einen", "einer", "eines",
                  "mein", "meine", "aktie", "aktien", "karte", "karten", "streckenkarte",
                  "streckenkarten", "gleiskarte", "gleiskarten", "strecke", "zug", "mit",
                  "auf", "im", "fur", "gesellschaft", "ich", "mochte", "will", "wurde",
                  "gerne", "jetzt", "also", "bitte", "spielzug", "hand", "aus der hand", "ab", "vom",
                  "aus der", "aus dem",
                  "spiel", "partie", "hiermit",
                  "zum", "zur"],
        "greetings": ["hallo", "moin", "servus", "gruss", "grusse", "viele grusse",
                      "liebe grusse", "lg", "vg", "mfg", "danke", "vielen dank", "tschuss",
                      "ciao", "guten tag", "liebe", "lieber", "hi"],
        "sign_offs": ["gruss", "grusse", "viele grusse", "liebe grusse", "lg", "vg", "mfg",
                      "danke", "vielen dank", "tschuss", "ciao"],
    },
    # ------------------------------------------------------------------ Czech
    "cs": {
        "verbs": {
            "build": ["postav", "postavit", "postavim", "stavim", "stavet", "umisti",
                      "polozit", "poloz"],
            "take": ["vezmi", "vzit", "beru", "vezmu", "lizni", "liznout", "liznu", "tahnout",
                     "tahnu", "tahni", "vyber", "vybrat"],
            "swap": ["vymen", "vymenit", "vymenim", "smen", "smenit", "vratit", "vrat"],
            "invest": ["investuj", "investovat", "investuji", "investuju", "vyloz", "vylozit",
                       "vylozim", "investice"],
            "discard": ["odhod", "odhodit", "odhodim", "zahod", "zahodit", "zahodim", "odloz",
                        "odlozit", "odlozim", "zahazuji", "zahazuju", "odhazuji", "odhazuju"],
            "pass": ["pas", "pasuji", "pasuju", "pasovat"],
            "start": ["zacni", "zacit", "zacinam", "pocatecni", "pocatecni investice", "start",
                      "startovni"],
            "redraw": ["vymen kartu", "vymenit kartu", "lizni znovu", "liznout znovu"],
        },
        "commands": {
            "help": ["napoveda", "pomoc"], "status": ["stav", "stav hry"],
            "history": ["historie", "prubeh"], "rules": ["pravidla"],
            "legal": ["tahy", "moznosti", "povolene tahy"],
            "hint": ["rada", "napoveda tahu", "doporuceni"],
            "timezone": ["pasmo", "casove pasmo"],
            "vacation": ["dovolena", "nepritomnost"],
            "resign": ["vzdavam", "vzdat", "vzdat se", "vzdavam se"],
            "confirm": ["potvrdit", "potvrzuji", "potvrzuju", "potvrzuji to", "potvrzeno"],
            "digest": ["souhrn"], "daily": ["denne", "denni", "jednou denne"],
            "calendar": ["kalendář"],
            "language": ["jazyk"],
            "on": ["zapnout", "zapnuto"], "off": ["vypnout", "vypnuto", "konec"],
            "days": ["dni", "dny", "dnu"], "hours": ["hodin", "hodiny", "hodina", "hod"],
        },
        "cards": {
            "plain": ["obycejna", "obycejnou", "obycejne", "obycejny", "bez pruhu",
                      "bez pruhu", "prazdna", "prazdnou"],
            "black": ["cerna", "cernou", "cerne", "cerny", "cernym"],
            "white": ["bila", "bilou", "bile", "bily", "bilym"],
            "black-white": ["cernobila", "cernobilou", "cernobile", "cernobily",
                            "cerno-bila", "cerno-bilou", "cerna a bila", "cernou a bilou"],
            "joker": ["zolik", "zolika", "zolikem", "zoliky"],
            "as": ["jako"],
        },
        "words": {
            "stack": ["balicek", "balicku", "balik", "baliku", "hromadka", "hromadky",
                      "hromadku", "naslepo", "vrchni"],
            "display": ["nabidka", "nabidky", "nabidku", "nabidce", "vylozena", "vylozenou",
                        "vylozene", "licem nahoru", "pozice"],
            "none": ["nic", "zadnou", "zadna"],
            "take none": ["nic neberu", "neberu nic", "neberu", "nic nevezmu", "nevezmu nic",
                          "nevezmu"],
            "drawn": ["liznutou", "liznuta", "taženou", "tazenou", "prave liznutou"],
            "for": ["za"],
            "to": ["do"], "and": ["i"], "from": ["z", "ze", "od"], "between": ["mezi"],
            "then": ["pak", "potom", "a pak", "a potom"],
            "no swap": ["bez vymeny", "nevymenuji", "nevymenuju", "nemenim"],
        },
        "numbers": {"jedna": 1, "jeden": 1, "jednu": 1, "dva": 2, "dve": 2, "tri": 3,
                    "ctyri": 4, "pet": 5, "sest": 6, "sedm": 7, "osm": 8, "devet": 9,
                    "deset": 10},
        "ordinals": {"prvni": 1, "druha": 2, "druhou": 2, "druhy": 2, "treti": 3,
                     "ctvrta": 4, "ctvrtou": 4, "ctvrty": 4},
        "quiet": ["akcie", "akcii", "akci", "karta", "kartu", "kartou", "karty", "trat",
                  "trate", "trati", "vlak", "vlakem", "a", "s", "se", "na", "moje", "muj", "me",
                  "spolecnost", "spolecnosti", "chci", "bych", "prosim", "ted", "tah", "hra", "hry",
                  "hru", "ze hry", "timto",
                  "tahu", "ruky", "z ruky"],
        "greetings": ["ahoj", "zdravim", "cau", "dobry den", "diky", "dik", "dekuji",
                      "dekuju", "s pozdravem", "zdar", "mejte se", "na shledanou", "mili",
                      "vazeni"],
        "sign_offs": ["diky", "dik", "dekuji", "dekuju", "s pozdravem", "zdar", "mejte se",
                      "na shledanou", "cau", "ahoj"],
    },
    # ------------------------------------------------------------------ Chinese
    "zh": {
        "verbs": {
            "build": ["建造", "建", "建设", "修建", "铺设", "放置"],
            "take": ["拿", "拿取", "抽", "抽取", "选取"],
            "swap": ["交换", "换", "兑换", "替换"],
            "invest": ["投资"],
            "discard": ["弃牌", "弃", "丢弃"],
            "pass": ["过", "跳过", "过了", "pass"],
            "start": ["起始", "开始", "初始", "初始投资", "起始投资"],
            "redraw": ["重抽", "重新抽"],
        },
        "commands": {
            "help": ["帮助", "说明", "指南"], "status": ["状态", "局面", "现状"],
            "history": ["历史", "记录"], "rules": ["规则"],
            "legal": ["合法", "合法行动", "可行"], "hint": ["提示", "建议"],
            "timezone": ["时区"], "vacation": ["休假", "度假", "请假"],
            "resign": ["认输", "投降", "退出"], "confirm": ["确认", "已确认"],
            "digest": ["摘要", "汇总"], "calendar": ["日历", "日程"], "language": ["语言"], "daily": ["每天", "每日"],
            "on": ["开", "打开", "开启"], "off": ["关", "关闭", "结束"],
            "days": ["天"], "hours": ["小时"],
        },
        "cards": {
            "plain": ["无条纹", "无纹", "普通", "素色", "灰色"],
            "black": ["黑色"],
            "white": ["白色"],
            "black-white": ["黑白", "黑白色", "黑白条纹"],
            "joker": ["百搭", "百搭牌", "万能", "万能牌", "鬼牌"],
            "as": ["当作", "作为", "当成"],
        },
        "words": {
            "stack": ["股票堆", "牌堆", "牌库", "顶牌", "暗牌"],
            "display": ["场上", "明牌", "翻开", "展示", "展示区", "位置"],
            "take none": ["不拿"], "none": ["不要", "无股票"],
            "drawn": ["刚抽的", "抽到的", "刚拿的"],
            "for": ["换成"],
            "to": ["到", "至"], "and": ["和", "与", "及", "并"], "from": ["从"],
            "then": ["然后", "再", "接着"],
            "no swap": ["不换", "不交换"],
        },
        "numbers": {"一股": 1, "两股": 2, "二股": 2, "三股": 3, "四股": 4, "五股": 5, "六股": 6,
                    "七股": 7, "八股": 8, "九股": 9, "十股": 10},
        "ordinals": {"第一": 1, "第二": 2, "第三": 3, "第四": 4, "第一张": 1, "第二张": 2,
                     "第三张": 3, "第四张": 4},
        "quiet": ["股票", "股份", "股", "张", "个", "牌", "卡", "轨道卡", "轨道牌", "轨道",
                  "铁路", "火车", "列车", "公司", "我", "我要", "要", "想", "请", "的",
                  "在", "用", "一张", "吧", "游戏", "这局", "本局",
                  # everyday words holding a one-character order word (过, 抽, 弃),
                  # so that chatter stays chatter ("不过", "抽空")
                  "不过", "过来", "过去", "经过", "通过", "难过", "超过", "错过", "过年",
                  "过节", "路过", "抽空", "抽烟", "抽时间", "放弃", "拿到", "拿走", "了", "这回合", "本回合", "回合", "行动",
                  "手牌", "手里的"],
        "greetings": ["你好", "您好", "大家好", "各位", "嗨", "谢谢", "多谢", "谢了",
                      "再见", "祝好", "此致", "加油"],
        "sign_offs": ["谢谢", "多谢", "谢了", "再见", "祝好", "此致"],
    },
}
"""Per language, every word a player may write, by class, to the English word it
stands for (see the module docstring)."""

# ====================================================================== numerals

CHINESE_DIGITS: dict[str, int] = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "俩": 2, "三": 3,
                                  "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
"""Chinese digits (``两``, ``俩``: two of something); with ``十`` (ten) they write
the numbers 1-99 (``十``, ``十二``, ``二十``, ``二十五``)."""

CHINESE_MEASURE_WORDS = "张股份个只枚"
"""Measure words that may follow a number (``两张``, ``三股``, ``2份``) or an
ordinal (``第二张``, ``第2个``); read as nothing."""

# ====================================================================== cities

CITIES: dict[str, dict[str, str]] = {
    "es": {
        "Nueva York": "New York", "Nueva Orleans": "New Orleans", "San Luis": "St. Louis",
        "Búfalo": "Buffalo",
    },
    "de": {},
    "cs": {},
    "zh": {
        "温哥华": "Vancouver", "西雅图": "Seattle", "波特兰": "Portland", "旧金山": "San Francisco",
        "三藩市": "San Francisco", "洛杉矶": "Los Angeles", "卡尔加里": "Calgary",
        "温尼伯": "Winnipeg", "博伊西": "Boise", "里诺": "Reno", "雷诺": "Reno",
        "盐湖城": "Salt Lake City", "菲尼克斯": "Phoenix", "凤凰城": "Phoenix",
        "阿尔伯克基": "Albuquerque", "埃尔帕索": "El Paso", "丹佛": "Denver", "夏延": "Cheyenne",
        "比林斯": "Billings", "俾斯麦": "Bismarck", "苏福尔斯": "Sioux Falls",
        "明尼阿波利斯": "Minneapolis", "奥马哈": "Omaha", "堪萨斯城": "Kansas City",
        "达拉斯": "Dallas", "休斯敦": "Houston", "休斯顿": "Houston", "圣安东尼奥": "San Antonio",
        "奇瓦瓦": "Chihuahua", "蒙特雷": "Monterrey", "德卢斯": "Duluth", "马凯特": "Marquette",
        "芝加哥": "Chicago", "底特律": "Detroit", "圣路易斯": "St. Louis", "多伦多": "Toronto",
        "孟菲斯": "Memphis", "新奥尔良": "New Orleans", "亚特兰大": "Atlanta",
        "杰克逊维尔": "Jacksonville", "迈阿密": "Miami", "匹兹堡": "Pittsburgh",
        "布法罗": "Buffalo", "水牛城": "Buffalo", "奥尔巴尼": "Albany", "纽约": "New York",
        "波士顿": "Boston", "华盛顿": "Washington", "蒙特利尔": "Montreal",
    },
}
"""Per language, city names in the language's form -> the English name boards use.
Only real exonyms (German and Czech use the English names of these cities)."""

CITY_CASE_ENDINGS: dict[str, tuple[str, ...]] = {
    "cs": ("ovi", "em", "ou", "u", "e", "a", "y", "i"),
}
"""Per language that declines city names, the endings a city's name may take
(Czech ``z Denveru``, ``do Chicaga``, ``New Yorku``, ``San Franciska``): a word the
board does not know is read as the city whose name it is with one of these endings
in place of the name's last letter(s) (at most two letters more or fewer), when
exactly one city's name fits."""



# ====================================================================== press

PRESS_WORDS: dict[str, dict[str, list[str]]] = {
    "en": {"to": ["to"], "all": ["all", "everyone", "everybody"]},
    "es": {"to": ["a", "para"], "all": ["todos", "todas", "todo el mundo"]},
    "de": {"to": ["an"], "all": ["alle"]},
    "cs": {"to": ["pro", "komu"], "all": ["všichni", "všem", "všechny", "vsichni", "vsem", "vsechny"]},
    "zh": {"to": ["给", "致", "发给"], "all": ["所有人", "大家", "全体"]},
}
"""The words of a press line (``moderation/press.py``): ``to NAME:`` / ``to all:``
in each language (``to``: the word before the names; ``all``: everyone).  Every
language's words are read in every game; the names must be the game's seats.
Chinese needs no space after the word (``给Bob：``)."""
