"""English verbs whose past forms do not end in -ed: a question's "did she buy" finds
the turn that says "bought".

A question asks with "did" and the verb's base form; what was said uses the past. For
regular verbs FTS5's Porter stemmer already brings the two together (walked -> walk);
for these it cannot. So a query word that is the base form of one of these verbs also looks
for its past forms (`memory.search.words.spellings`). The list is closed-class
English, like the stopwords: a morphology library would read the same from its own
tables, but costs a third of a second to load in every `kioku search`.
"""

from __future__ import annotations

import functools

# Base form, then its simple past and past participle where they differ from it (be, do
# and have are left out: their forms are stopwords). `|` and line ends part the verbs.
_VERBS = """
arise arose arisen|awake awoke awoken|bear bore born borne|beat beaten
become became|begin began begun|bend bent|bet|bind bound|bite bit bitten|bleed bled
blow blew blown|break broke broken|breed bred|bring brought|build built|burn burnt
buy bought|catch caught|choose chose chosen|cling clung|come came|cost|creep crept
cut|deal dealt|dig dug|draw drew drawn|dream dreamt|drink drank drunk
drive drove driven|eat ate eaten|fall fell fallen|feed fed|feel felt|fight fought
find found|flee fled|fly flew flown|forbid forbade forbidden|forget forgot forgotten
forgive forgave forgiven|freeze froze frozen|get got gotten|give gave given|go went gone
grind ground|grow grew grown|hang hung|hear heard|hide hid hidden|hit
hold held|hurt|keep kept|kneel knelt|know knew known|lay laid|lead led|lean leant
leap leapt|learn learnt|leave left|lend lent|let|lie lay lain|light lit|lose lost
make made|mean meant|meet met|pay paid|prove proven|put|quit|read|ride rode ridden
ring rang rung|rise rose risen|run ran|say said|see saw seen|seek sought|sell sold
send sent|set|sew sewn|shake shook shaken|shine shone|shoot shot|show shown
shrink shrank shrunk|shut|sing sang sung|sink sank sunk|sit sat|sleep slept
slide slid|speak spoke spoken|speed sped|spend spent|spill spilt|spin spun|split
spread|spring sprang sprung|stand stood|steal stole stolen|stick stuck|sting stung
stink stank stunk|strike struck|string strung|strive strove striven|swear swore sworn
sweep swept|swim swam swum|swing swung|take took taken|teach taught|tear tore torn
tell told|think thought|throw threw thrown|understand understood|upset|wake woke woken
wear wore worn|weave wove woven|weep wept|win won|wind wound|withdraw withdrew withdrawn
write wrote written
"""


@functools.cache
def _past() -> dict[str, tuple[str, ...]]:
    """Each verb's base form -> its past forms."""
    table: dict[str, tuple[str, ...]] = {}
    for entry in _VERBS.replace("\n", "|").split("|"):
        if entry.strip():
            base, *past = entry.split()
            table[base] = tuple(dict.fromkeys(table.get(base, ()) + tuple(past)))
    return table


def verb_forms(word: str) -> tuple[str, ...]:
    """The past forms of `word` if it is the base form of one of these verbs (go -> went,
    gone); none otherwise. Only that way: a question asks "did she go" of what was said
    as "went", while someone who searches for "paid" remembers the word itself."""
    return _past().get(word, ())
