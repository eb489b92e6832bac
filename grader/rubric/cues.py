"""Cue tables of :mod:`.assertions`: the words that start a segment or a sub-clause, negate, frame, attribute,
doubt, suppose, refute or retract (all matched on normalised text, :func:`.read.normalise`).

The stances they give and their scopes are described in :mod:`.assertions`; this module holds only the patterns.
"""
from __future__ import annotations

import re

SEGMENT = re.compile(r";|:|\?|\b(?:but|however|whereas|while|although|though|in fact|actually|in reality|"
                      r"what is (?:actually |really )?true is|the truth is|in truth)\b"
                      r"|\binstead\b(?! of\b)")
SUBCLAUSE = re.compile(r"[,()]|\s-\s|\b(?:and|or|so|because|since|which|who|that|when|as|thus|hence|then)\b")
NOT_NEGATION = re.compile(r"\bnot (?:only|just|merely)\b|\bno (?:more|less|fewer) than\b|\bno matter\b|"
                           r"\bwhether or not\b|\bno doubt\b|\bnothing but\b|\bnot least\b"
                          r"|\bnot (?:wrong|false|incorrect|untrue|mistaken|a myth|a mistake|an error|a misconception)\b"
                          # an amount a decrease ends at, not a negation: "it has faded to nothing by the bottom layers"
                          r"|\b(?:shr[iau]nk\w*|fad\w*|decay\w*|drop\w*|dwindl\w*|vanish\w*|diminish\w*|reduc\w*|sank|sink\w*|"
                          r"fall\w*|fell|worn (?:down|away)) (?:down )?to (?:almost |nearly |"
                          r"practically |virtually |basically |essentially |next to )?nothing\b")
#: "hardly", "rarely", "seldom", "scarcely", "fail(s) to", "lack(s)" deny their predicate as "not" does.
VERBAL = re.compile(r"\b(?:not|never|nor|neither|nobody|no one|no-one|none|nothing|no longer|hardly|rarely|seldom|"
                    r"scarcely|fail(?:s|ed|ing)? to|lack(?:s|ed|ing)?)\b")
PHRASAL = re.compile(r"\b(?:no(?!-)|without|instead of|rather than)\b")  # not the "no-" of "the no-residual run"
#: "*Far from* running in parallel, the heads wait": it denies everything up to the next comma of its segment.
FAR_FROM = re.compile(r"\bfar from\b(?! (?:clear|obvious|certain|perfect|ideal|optimal|trivial|easy|simple|"
                      r"over|done|complete|finished)\b)")
#: Words that deny a thing's role rather than negating a verb: they cover their whole sub-clause, subject included
#: ("warm-up *is irrelevant* to it", "the additions *make no difference*", "a layer norm leaves the gradient
#: *untouched*": the cue is the last word, so evidence that spells "untouched" owns it).
DENIAL = re.compile(
    r"\b(?:is|are|was|were|be|being|been|seems?|seemed|becomes?|became|remains?|remained)\s+(?:(?:completely|entirely|"
    r"totally|quite|largely|simply|just|really|actually|mostly|basically)\s+)?(?:irrelevant|unnecessary|unneeded|"
    r"superfluous|pointless|redundant|unimportant|immaterial|no different|not (?:needed|necessary|required|important|"
    r"essential|relevant|involved)|of no (?:importance|consequence|use))\b"
    r"|\b(?:has|have|had)\s+(?:nothing|little)\s+to do with\b|\bplay(?:s|ed)?\s+(?:no|little)\s+(?:role|part)\b"
    r"|\bmak(?:es?|ing)\s+(?:no|little)\s+difference\b|\bmade\s+(?:no|little)\s+difference\b"
    r"|\b(?:does|do|did)\s+not\s+(?:matter|make (?:a|any) difference)\b"
    r"|\bleav(?:es?|ing)\b(?:\s+[\w'-]+){1,5}?\s+(?P<left>untouched|unchanged|unaffected|alone)\b")
NP_STOP = re.compile(r"(?:is|are|was|were|be|been|has|have|had|do|does|did|can|could|will|would|must|should|"
                      r"may|might|shall|gets?|needs?)$")
#: An adverb after the noun of a "without" phrase: the predicate follows ("without residuals *also* overfits"; not
#: before the noun: "without *even* a causal mask").
NP_ADVERB = re.compile(r"(?:also|only|just|still|often|always|then|simply|already|even|again|usually|merely|really|"
                       r"actually|basically|typically)$")
NP_NEW = re.compile(r"(?:every|each|all|both|it|they|he|she|we|you|this)$")

_I = r"(?:i|we)(?: personally)?"
#: Vague others (people, not heads or tokens) whose word a student may only report.
_WHO = (r"(?:people|folks|authors|students|sources|blogs?|blog posts|posts|tutorials|articles|websites|sites|videos|"
        r"researchers|writers|commentators|textbooks|books|papers|engineers|experts|users|friends|colleagues|"
        r"classmates|fans|critics|beginners|newcomers|practitioners)")
_OFTEN = r"(?: also| often| sometimes| usually| commonly| even| still| all)?"
#: Vague others' view with a modal: "some *might* think", "many students *would* say" (not "will": "a language model
#: will write text ...", a source's own action, is no view).
_MODAL = r"(?: (?:might|may|could|would))?"
_SAY = (r"(?:say|says|said|claim|claims|claimed|think|thinks|thought|believe|believes|believed|argue|argues|argued|"
        r"assume|assumes|assumed|suggest|suggests|suggested|insist|insists|insisted|reckon|reckons|reckoned|maintain|"
        r"maintains|maintained|state|states|stated|write|writes|wrote|expect|expects|expected|imagine|imagines|"
        r"suppose|supposes)")
#: One person or program with no authority on the subject, whose word a student may only report ("my friend
#: claims", "ChatGPT told me", "according to a YouTube video"). A reference work or an author the student cites
#: ("according to Wikipedia / the paper", "the authors say") is an endorsement and stays asserted.
_SOURCE = (r"(?:(?:my|an?|one|an?other|some) (?:(?:good|best|old|older|younger) )?(?:friend|classmate|roommate|flatmate|"
           r"brother|sister|cousin|dad|father|mum|mom|mother|uncle|aunt|neighbou?r|coworker|co-worker|fellow student|"
           r"teammate|team-mate|labmate|lab partner|study partner|groupmate|colleague|"
           r"redditor|youtuber|stranger|chatbot|chat bot|ai|llm|language model|forum post|reddit post|reddit thread|"
           r"youtube video|tiktok|tweet|comment)(?: of mine)?\b|\b(?:chat ?gpt|claude|gemini|bard|copilot|"
           r"gpt-?[45][\w.-]*|o[134](?:-mini|-pro)?|grok|deepseek|meta ai|qwen[\w.-]*|"
           r"the (?:chatbot|ai|llm|assistant|ai assistant))\b|"
           r"\bsomeone on (?:reddit|twitter|youtube|stack overflow|the internet|a forum)\b)")
FRAMES: tuple[tuple[str, re.Pattern], ...] = tuple((stance, re.compile(p)) for stance, p in (
    ("framed", r"\b(?:a|one|the|another) (?:very )?(?:common |popular |frequent |widespread |classic |typical |"
               r"usual )?(?:misconception|myth|mistake|error|fallacy|misunderstanding|confusion|trap|pitfall|(?<=common )"
               r"guess|(?<=common )assumption|(?<=popular )guess|(?<=first )guess)"
               r"s? (?:is|are|was)\b(?: that\b| to think\b)?"),
    ("framed", r"\b(?:it|this)(?: is|'s) (?:a |an )?(?:common |popular |widespread )?(?:myth|misconception|mistake|"
               r"error|fallacy) (?:that|to (?:think|say|believe))\b"),
    # a sentence labelled as the wrong idea it states: "Myth: the MLP mixes tokens.", "Common misconception: ...",
    # "Not: heads split tokens" (the label ends its segment at the colon; the frame takes the next one)
    ("framed", r"^\W*(?:(?:a|one|the|another) )?(?:very )?(?:common |popular |frequent |widespread |classic |typical |"
               r"usual )?(?:myth|misconception|mistake|error|fallacy|misunderstanding|pitfall|trap|wrong|false|not|"
               r"incorrect|wrong (?:idea|picture|view|belief))s?(?:\s*(?:#|no\.?)?\s*\d+)?\W*(?=:)"),
    # a wording shown as one to avoid: "This is the picture to avoid: ...", "A typical exam distractor reads: ..."
    ("framed", r"^[^:]{0,40}\b(?:(?:picture|answer|version|thing|sentence|claim|wording|phrasing)s? to avoid|what not to "
               r"(?:say|write|think)|distractors?(?: reads?| says?| is)?|wrong answers?|false (?:options?|answers?))\W*(?=:)"),
    # a wording others are marked down for: "the grader flags answers saying ...", "this answer loses a point for
    # saying ...", "reviewer 2 objected to the sentence ..."
    ("framed", r"\b(?:flags?|flagged|penali[sz]es|penali[sz]ed|marks? down|loses? (?:a |one )?(?:point|mark)s? for|lost "
               r"(?:a |one )?(?:point|mark)s? for|objected to|objects to|warns? against)\b[^.;:]{0,40}?\b(?:saying|writing|"
               r"claiming|stating|the (?:sentence|statement|claim|phrase|line|answer|option|wording))\b(?: that\b)?"),
    ("framed", r"\b(?:misleading|wrong|bad|badly drawn|incorrect) (?:diagram|figure|picture|drawing|explanation|blog|"
               r"tutorial|answer|illustration)s? (?:shows?|draws?|says?|suggests?|depicts?|claims?)\b(?: that\b)?"),
    ("doubted", r"\b(?:early|earlier|first|old|older|previous) (?:drafts?|versions?)(?: of [\w ]{1,20}?)? (?:said|says|"
                r"claimed|stated|had)\b(?: that\b)?"),
    ("negated", r"\bthere is no (?:sense|way|case|layer|model|version|point) in which\b|\bin no sense\b"),
    ("framed", r"\b(?:wrongly|mistakenly|incorrectly|falsely|erroneously) (?:believe|believes|think|thinks|"
               r"assume|assumes|say|says|claim|claims|imagine|imagines|shows?|showed|draws?|drew|depicts?|depicted|"
               r"suggests?|suggested|states?|stated|implies|implied|describes?|described|writes?|wrote|said)\b(?: that\b)?"),
    ("framed", r"\bcontrary to (?:popular belief|common belief|what (?:many|most|some) (?:people )?"
               r"(?:think|believe|assume|say))\b"),
    ("negated", r"\b(?:it|this|that) (?:is|was|would be|will be|seems)(?: (?:simply|quite|plainly|just|completely|"
                r"totally|entirely|very))? (?:false|wrong|incorrect|untrue|inaccurate|misleading|mistaken|a mistake|"
                r"an error|nonsense|not (?:true|correct|right|accurate|the case|so)|never (?:true|the case)) (?:that|"
                r"to (?:say|think|believe|claim|assume|suggest|write|state|imagine)(?: that)?)\b|\bnot the case that\b"),
    ("framed", r"\bcontrary to (?:what )?(?:the|our|my) (?:slides?|lectures?|lecturer|lesson|course|teacher|"
               r"instructor|professor|notes|textbook|book|paper|reading)(?: (?:say|says|said|claim|claims|teach|"
               r"teaches|taught|show|shows|showed|tell us|told us))?\b"),
    ("framed", r"\bcontrary to (?:what )?(?!(?:many|most|some|a few|few|several|others|people|popular|common|"
               r"beginners|newcomers|students|tutorials|blogs)\b)(?:[\w.'-]+ ){1,4}?(?:say|says|said|claim|claims|"
               r"claimed|teach|teaches|taught|show|shows|showed|state|states|stated|write|writes|wrote|suggest|"
               r"suggests|tells us|told us)\b"),
    ("supposed", r"\b(?:i|we) (?:only |really |just )?wish\b(?: that\b)?|\bif only\b"),
    ("doubted", rf"\b{_I} (?:refuse|decline) to (?:believe|accept|think)\b(?: that\b)?|\b{_I}(?: also| even| once| really| always)? used to "
                r"(?:think|believe|assume|imagine)\b(?: that\b)?|\b(?:at first|initially|originally|once|back then|at one "
                r"point|before (?:this|the) (?:course|lesson|lecture)),? (?:i|we) (?:also |even )?(?:thought|believed|"
                r"assumed|imagined|was sure)\b(?: that\b)?|\b(?:i|we) (?:also |even )?(?:once|originally|first|initially) "
                r"(?:thought|believed|assumed|imagined)\b(?: that\b)?"
                # a first version of one's own answer, said to be the first ("I first wrote that the MLP combines the
                # words, but ...": dev_router4); not a plain "I wrote that X", which a student may still hold ("I wrote
                # that the heads take turns, and I still think so": a reviewer's attack)
                r"|\b(?:i|we) (?:first|originally|initially|once|previously|at first) (?:wrote|said|claimed|answered|"
                r"put down)(?: (?:earlier|before|above|here))? that\b|\b(?:i|we) (?:wrote|said|claimed|answered|put down) "
                r"(?:at first|first|originally|initially|earlier|before) that\b"),
    ("doubted", r"\bnext (?:you will|you'll|they will|they'll) (?:tell|say to) (?:me|us)\b(?: that\b)?"),
    # an expectation the sentence then gives up, or a guess made before the runs: "I expected post-norm to be the
    # more stable, but it diverged", "my guess before running it was that ..."
    ("doubted", rf"(?P<expected>(?<!\bas )\b{_I} (?:had )?(?:expected|assumed|guessed|predicted|thought|was sure)\b"
                r"(?! about\b| of\b)(?: that\b)?|\bmy (?:first |initial |original )?guess (?:was|had been) (?:that\b)?)|"
                r"\bmy (?:first |initial |original )?guess before \w+(?: \w+)? (?:was|had been) (?:that\b)?"),
    # only a beginner would say: the speaker calls the claim naive
    ("framed", r"\bonly (?:a |an |the )?(?:beginner|novice|fool|amateur|newcomer|layman|layperson|child|idiot)s? "
               r"(?:would|could|might|will)? ?(?:say|says|think|thinks|believe|believes|claim|claims|assume|assumes)\b"
               r"(?: that\b)?"),
    ("doubted", r"\b(?:do not|never|nobody should|no one should) (?:believe|trust|listen to) (?:anyone|anybody|someone|"
                r"those|people|whoever|a person)(?: who| that)? (?:tells?|says?|claims?|writes?|insists?)(?: (?:you|us|"
                r"me))?\b(?: that\b)?"),
    ("doubted", rf"\b{_I} (?:do not|did not|can not|would not|no longer) (?:believe|think|buy|accept|agree)\b"
                r"(?: that\b)?"),
    ("doubted", rf"\b{_I} (?:doubt|question)\b(?: that\b| whether\b)?|\bi am (?:not (?:sure|certain|convinced)|"
                r"unsure|unconvinced|sceptical|skeptical)\b(?: (?:that|whether|if)\b)?|\bnot sure (?:that|whether|"
                r"if)\b"),
    ("doubted", r"\b(?:nobody|no one|no-one|no study|no paper|no one ever) (?:has |have )?(?:ever )?(?:shown|"
                r"proved|proven|demonstrated|established|confirmed)\b(?: that\b)?"),
    ("doubted", r"\bit is (?:unclear|not clear|uncertain|doubtful|debatable|not obvious|not known|unknown|"
                r"an open question)\b(?: (?:whether|if|that)\b)?"),
    # a mere possibility: "it could be that B only learns letter frequencies, but ..." (not "it could be shown")
    ("doubted", r"\b(?:it|this|that) (?:could|might|may) (?:well |also )?be (?:that|because)\b"),
    ("attributed", rf"\b(?:some|many|a few|few|several|most|certain|various)(?: (?:of (?:the|my|our) )?{_WHO})?{_OFTEN}{_MODAL} "
                   rf"{_SAY}\b(?: that\b)?"),
    ("attributed", rf"(?<!\bthe )(?<!\bthese )(?<!\bthose )\b(?:others|someone|somebody|many people|most people|"
                   rf"{_WHO}){_OFTEN}{_MODAL} {_SAY}\b(?: that\b)?"),
    ("attributed", rf"\bthey{_OFTEN} (?:say|says|claim|claims|believe|argue|insist|reckon|maintain|tell us)\b(?: that\b)?"),
    ("attributed", r"\bit (?:is|was|has been|gets) (?:also )?(?:often |commonly |sometimes |widely |frequently |usually )?"
                   r"(?:said|claimed|believed|thought|assumed|argued|suggested|rumou?red|reported)\b(?: that\b)?"),
    ("attributed", r"\b(?:is|are|was|were) (?:also )?(?:often |commonly |sometimes |widely |frequently |usually |generally )?"
                   r"(?P<said_to>(?:said|claimed|rumou?red|reported|alleged) to)\b"),  # "residuals are often said to
    # fix ...": another's claim, unless the sentence endorses it (ENDORSED)
    ("attributed", r"\b(?:apparently|supposedly|allegedly|reportedly|purportedly|rumou?r has it|so they say|so i am told|"
                   r"i (?:have )?heard|i read somewhere|(?<=, )(?:we|i) (?:are|am|were|was) told(?=,))\b(?: that\b)?"),
    ("attributed", rf"\b{_SOURCE}{_OFTEN} (?:{_SAY}|told me|tells me|told us|tells us|said to me|explained to me|added|"
                   r"adds|replied|answered|printed|wrote back)\b"
                   r"(?: that\b)?"),
    ("attributed", rf"\baccording to {_SOURCE}"),
    # a speaker named before ("I asked a chatbot and *it told me* ..."): only a speaker tells or claims
    # the source named in the same sentence, then its words after a colon or "that": "I asked ChatGPT and *it
    # explained:* ...", "my friend replied that ..." (without the source, "it explained" may be the lecture's)
    ("attributed", rf"\b{_SOURCE}[^.;:?!]{{0,60}}?\b(?:it|he|she|they) (?:also |then |just )?(?:explained|answered|"
                   r"replied|responded|wrote|said|suggested)\b(?: (?:to me|to us))?(?=\s*:| that\b)"),
    ("attributed", r"\b(?:it|he|she) (?:also |then )?(?:told me|told us|tells me|tells us|claimed|claims|insisted|"
                   r"insists)\b(?: that\b)?"),
    ("attributed", rf"\baccording to (?:(?:some|many|a few|several|certain|various|its|their|his|her|my|our) )?"
                   rf"(?:{_WHO}|others|someone|somebody|rumou?r|popular|folk|the internet|online|hearsay)\b"
                   r"|\baccording to some\b"),
    # a hypothetical other's word: "anyone who tells you the block has no layer norm has only looked at ..."
    ("attributed", r"(?<!believe )(?<!trust )(?<!listen to )\b(?:anyone|anybody|whoever|those|people) (?:who|that) "
                   r"(?:tells? (?:you|us|me)|says?|claims?|thinks?|"
                   r"writes?|believes?)\b(?: that\b)?"),
    ("attributed", r"\b(?:one|you|someone|a student|a reader) (?:might|may|could|would) (?:think|say|assume|"
                   r"expect|believe|guess|imagine|suppose)\b(?: that\b)?|\bit(?:'s| is) (?:\w+ )?(?:tempting|easy|natural|"
                   r"common) to (?:think|say|assume|believe|imagine|picture|suppose)\b(?! of\b| about\b)(?: that\b)?"
                   # "it is easy to think the feed-forward layer mixes the tokens, but it does not" (dev_router6)
                   # "one might picture W_O being applied to each head on its own, but ..." (dev_router2); not "you
                   # could picture the heads as readers", the student's own picture offered to the reader
                   r"|\b(?:one|someone|a student|a reader|many|some) (?:might|may|could|would) (?:picture|envision|"
                   r"visuali[sz]e)\b"),
    # the reader's (or, in a letter to one's past self, the writer's old) belief that the sentence then corrects:
    # "you'll assume that eight heads cost eight times as much, but ...", "you probably believe X; in fact ..." (not
    # "you can think of each head as ...", not "as you'd expect, ...", not a belief the sentence confirms: "you'd think
    # X, and that's exactly what happens" is the writer's claim)
    ("attributed", r"(?P<expected>(?<!\bas )(?<!\bwhat )(?<!\bthan )(?<!\bunlike )\byou(?:'d|'ll| will| are going to|"
                   r"'re going to)?(?: (?:probably|naturally|naively|first|still|also))? (?:think|thought|assume|assumed|"
                   r"expect|expected|believe|believed|suppose|supposed|were sure|are sure|be tempted to (?:say|think))\b"
                   r"(?! of\b| about\b| to\b)(?: that\b)?)"),
    ("question", r"\bwhether\b"),
))
CONDITION = re.compile(r"(?:^|(?<=[;:] )|(?<=\bbut ))(?:had|were) (?=(?:the|a|an|each|every|all|we|you|they|it|"
                       r"there|this|these|those|gpt|bert)\b)|\b(?:if|unless|suppose|supposing|imagine|assuming|assume that|in case|provided that|"
                        r"as if|what if|pretend(?:ing)?(?: that)?|in (?:a|an|some) (?:world|universe|fantasy|dream) "
                        r"(?:where|in which)|let us (?:imagine|suppose|pretend)|let's (?:imagine|suppose|pretend))\b")
#: A condition that makes its whole sentence make-believe, consequent included ("*in a world where* heads ...,
#: each head ...", "*pretend that* ...", "*what if* ..."). "Imagine" and "suppose" only suppose their antecedent
#: (no rule): "suppose d_model is 768, then each head works in 64 dimensions" asserts the worked example.
MAKE_BELIEVE = re.compile(r"(?:had |were |pretend|in (?:a|an|some) (?:world|universe|fantasy|dream)|let(?: us|'s) (?:imagine|"
                          r"pretend)|what if)")
#: The modal of a counterfactual consequent ("..., the layer *would* be slower").
HYPOTHETICAL_MODAL = re.compile(r"\b(?:would|could|might|would have|could have|might have)\b")
#: A possibility left unrealised, no condition needed: "GPT *could have used* bidirectional attention, but ...",
#: "the heads *might have been* sequential" ("must have" infers what did happen and asserts it; "would have" states
#: what follows and asserts the rule: "each extra head *would have made* the layer more expensive"; "should have"
#: asserts an expectation: "post-norm is more stable, so it *should have learned* better").
COUNTERFACTUAL = re.compile(r"\b(?:could|might)(?: (?:easily|just|also|well|simply))? have (?:been|had|done|"
                            r"run|seen|read|put|set|built|kept|left|got|gotten|taken|given|shown|become|split|shared|"
                            r"made|[a-z]+ed)\b")
#: "If anything, the reverse holds", "(in reality) nothing of the sort": said of what came just before.
_REVERSE = r"(?:if anything,? )?the (?:reverse|opposite) (?:holds|is true|is the case)\b"
_NOT_SO = r"(?:in reality|in fact|actually|in truth)?,? ?nothing of the sort\b"
REFUTE_NEXT = re.compile(
    r"^(?:but |and |yet )?(?:this|that|it|which|the (?:idea|claim|belief)|(?:this|that|the) (?:option|statement|answer|"
    r"sentence|picture|version|wording)) (?:is|was|would be|is simply|is just) "
    r"(?:wrong|false|incorrect|untrue|mistaken|a myth|a misconception|a mistake|not (?:true|correct|right|so|"
    r"the case|how it works))\b|^(?:wrong|false|untrue|not (?:true|so)|nope|no)\s*[,.!:;]|"
    r"^not (?:if|quite|really|exactly|necessarily)\b|"
    r"^(?:they|it|this|that|he|she) (?:do|does|did|is|are) not\s*(?:[,.!:;]|$|because\b)|"
    r"^(?:both|all|each|all three|all of (?:them|these|those))(?: of (?:them|these|those))? (?:are |were )?(?:marked |"
    r"crossed out as )?(?:wrong|false|incorrect)\b|"
    rf"^{_REVERSE}|^{_NOT_SO}|^(?:yeah|oh|ah),? right\s*[.!]*$|^as if\s*[.!]*$")
#: A sentence (or a clause after "but") that distances the student from what came before it.
DISTANCE = re.compile(
    r"(?:^|[;:]\s*|\b(?:but|yet|though|and|still|then again)\s+)(?:"
    r"(?:i(?: am|'m) (?:not (?:so |entirely |completely |really |at all |fully )?(?:sure|certain|convinced)|unsure|"
    r"unconvinced|sceptical|skeptical|doubtful)|i have (?:my |some |serious |real |strong )?doubts)"
    r"(?=\s*(?:[.!,;]|$|(?:about|of) (?:it|that|this|them|these|those|all (?:of )?this)\b|(?:that|if|whether) (?:it|this|"
    r"that|they|these|those) (?:is|are|was|were|holds?|works?)\b|(?:it|this|that|they) (?:is|are|was|were|holds?)\b|"
    r"either way|at all|yet))|"
    r"i (?:no longer|do not any ?more) (?:do|think so|believe (?:it|that|this|so)|believe|think that)\b|"
    r"i (?:doubt|question) (?:it|that|this|them|these|those)\b|i (?:do not|did not) (?:buy|believe|trust) (?:it|that|this|them)\b|"
    r"(?:that|this|it) is (?:only |just )?(?:their|his|her|the authors'|other people's) (?:claim|view|opinion|idea|story|theory)|"
    r"i would not (?:commit|bet|swear|vouch|rely|put money)|i have not (?:checked|verified|confirmed|tested|looked)|"
    r"i (?:can not|could not) (?:confirm|verify|check|vouch|say for sure)|i do not (?:really )?know\b|"
    r"i (?:will |would |shall )?leave (?:that|this|it|the rest) to|(?:that|this) is (?:what|how) (?:they|people|some|"
    r"others) (?:say|claim|think|believe|see it)|(?:maybe|perhaps|possibly|who knows|not sure|no idea|hard to say|"
    r"or not)\s*[.!?]*$)")
#: A distancing sentence that reaches every sentence of its paragraph before it, not just the last one.
DISTANCE_ALL = re.compile(r"\b(?:any|all|none|most|each|every word) of (?:this|that|these|those|it|them)\b|\ball (?:of )?this\b|"
                           r"\bthese (?:claims|statements|ideas|things|points|views)\b")


#: A segment that refutes the one before it: "..., *but that is false*", "...; *in reality nothing of the sort*",
#: "...; *if anything, the reverse holds*".
REFUTE_SAME = re.compile(r"^\s*(?:and |but )?(?:(?:that|this|which|it) (?:is|was|turned out to be|proved to be|"
                          r"proved|turned out) (?:simply |just |completely |totally )?(?:wrong|false|"
                          rf"incorrect|untrue|a myth|a misconception|a mistake|not (?:true|correct|right))\b|{_NOT_SO}|{_REVERSE}|"
                          r"(?:i|we) (?:was|were) (?:wrong|mistaken)\b)")
#: A sub-clause that refutes or distances the rest of its segment: "..., *which turned out to be false*", "..., *or so
#: the story goes*", "..., *said no one ever*", "textbooks draw designers handing each head a role, *which is
#: misleading*".
REFUTE_CLAUSE = re.compile(
    r"(?:which|that) (?:is|was|turned out to be|turns out to be|proved to be|proves to be|has proved) (?:simply |just |"
    r"completely |totally |quite |very |deeply )?(?:wrong|false|incorrect|untrue|a myth|nonsense|not true|the opposite of the "
    r"truth|misleading|a misconception|a misunderstanding)\b|"
    r"or so (?:the story goes|they say|we are told|i am told|i was told|it is said|people say)\b|"
    r"said no(?: ?one| body)(?: ever)?\b|(?:yeah|oh)?,? ?as if\s*[.!]*$|(?:yeah|oh),? right\s*[.!?]*$|"
    r"sure,? sure\s*[.!]*$|(?:apparently|supposedly|allegedly|reportedly)\s*[.!]*$")
#: Sarcasm: a sentence opening "Sure, ..." followed by one that is only "Right." ("Sure, heads run in parallel. Right.").
SARCASM_OPEN = re.compile(r"^(?:(?:oh|yeah|yes|ah),? )?(?:sure|right|of course|naturally|obviously)\b,?")
SARCASM_CLOSE = re.compile(r"^(?:yeah,? |oh,? )?(?:right|as if|sure|sure,? sure|totally|of course)\s*[.!]*$")
#: A comment that mocks what came just before it, with no domain word of its own ("Totally believable.", "What a
#: lovely story.", "Whatever you say.", "..., and I am the queen of England."): it distances the sentence before it
#: (:func:`.assertions.distancing`). Bare "Right." or "Sure." count only after a "Sure, ..." (:data:`SARCASM_OPEN`).
SARCASM_COMMENT = re.compile(
    r"^(?:(?:yeah|oh|ah|great|sure|wow),? )*(?:totally believable|(?:very|how|so) (?:convincing|believable|likely|"
    r"plausible)|what a (?:lovely|nice|great|beautiful|wonderful|charming|cute|neat) (?:story|tale|picture|idea|"
    r"fairy tale)|a likely story|whatever you say|sure,? sure|yeah,? sure|sounds (?:great|lovely|nice|good|"
    r"impressive) on (?:a|the) (?:poster|slide|paper|brochure)|believe (?:that|it) (?:if|and) you (?:want|like|"
    r"will)|tell that to (?:the|your) \w+|how (?:convenient|lovely|neat|nice|clever|original|handy))\s*[.!]*$|"
    r"^i (?:totally |fully |really |completely )?(?:buy|believe) every word of (?:it|that|this)\b|(?:^|\band )i(?: am|'m) the (?:queen|king|pope|emperor) of\b|"
    r"\bpigs (?:can |will |do )?fly\b|\bswallow (?:every word|all|any) of (?:that|this|it)\b")
#: Sarcasm inside one sentence: "*Sure, because* the heads obviously share their weights*, right?*" (a "sure" that
#: opens and a "right?" tag that closes it), and "*As if* the heads ran in parallel." opening a sentence.
SARCASM_TAG = re.compile(r"^(?:oh |yeah |yes )?,? ?sure\b(?:(?!\b(?:but|however|though)\b)[^;:])*,\s*(?:right|yeah right)\s*[?!.]*$|^(?:yeah,? |oh,? )?as if\b")
#: A label that calls the list under it false ("Wrong claims:", "Myths:", "Misconceptions:"): its list items are
#: framed as errors. "Common misconceptions and why they are wrong:" is a label too; "Key points:" is none.
_LABEL = (r"(?:(?:some|a few|common|popular|typical|frequent|the) )?(?:wrong|false|incorrect|mistaken|untrue|bogus|"
          r"fake|made-up|erroneous) (?:claims|statements|ideas|beliefs|answers|facts|things)\b[^.:]*|"
          r"(?:(?:some|a few|common|popular|typical|frequent|the) )?(?:myths|misconceptions|falsehoods|mistakes|errors|"
          r"fallacies|lies)\b[^.:]*|(?:things|statements|claims|ideas|sentences|answers)(?: (?:that|which) (?:are|is))? "
          r"(?:not|never|nothing like) (?:true|correct|right|so|the case)\b[^.:]*|what (?:it|multi-head attention|"
          r"attention|the block|a transformer block|a residual|the residual) (?:is|does) not(?: do)?\b[^.:]*|"
          r"[^.:]*\b(?:crossed[- ]out|i crossed out|marked (?:as )?wrong|that lost marks|got no marks)\b[^.:]*")
FALSE_LABEL = re.compile(rf"^(?:{_LABEL}):\s*$")
#: The same label with its item in the sentence: "*Common misconceptions:* the heads split the tokens." frames what
#: follows the colon (:func:`.assertions._frames`).
FALSE_LABEL_INLINE = re.compile(rf"^(?:{_LABEL}):")

#: A sentence that takes back what came before it ("None of that is true.", "Everything in this paragraph is wrong.",
#: "I made all of this up.", "Everything I wrote above is false."): the whole sentence, nothing else in it.
RETRACT = re.compile(
    r"^(?:but |and |sadly |honestly |to be honest |in truth |well )?,? ?(?:"
    r"(?:none|nothing|not a word|not one word|no part|not one) of (?:this|that|it|these|those|the above|what i (?:have )?"
    r"(?:wrote|written|said)(?: above| so far| here)?)(?: \w+)? (?:is|was|are|were|holds?) (?:true|correct|right|"
    r"accurate|real|so)|"
    r"(?:everything|all|all of (?:this|that|it|the above)|all this|all that|each of these (?:claims|statements|"
    r"sentences)|every (?:word|sentence|claim)(?: of (?:this|it|that))?|(?:this|that|the) (?:whole |entire )?(?:paragraph|"
    r"answer|section|text|explanation|passage)|the above)(?: (?:in|of) (?:this|that|the|my) (?:paragraph|answer|"
    r"section|text|explanation))?(?: (?:that )?(?:i|we) (?:have )?(?:just )?(?:wrote|written|said|claimed|explained))?"
    r"(?: above| so far| here| before)? (?:is|was|are|were) (?:(?:all|completely|totally|entirely|simply|just|plain|"
    r"utterly) )*(?:wrong|false|incorrect|untrue|nonsense|rubbish|made up|invented|fiction|fabricated|a lie|lies|"
    r"not (?:true|correct|right|accurate))|"
    r"(?:i|we) (?:have )?(?:just )?(?:made|invented|fabricated|made (?:all|it all|everything)) (?:(?:all|most|every word|"
    r"everything|it all|all of|each of|this|that|it|the above|all this|these|those)(?: of)? ?)*up|"
    r"(?:i|we) (?:have )?(?:just )?(?:invented|fabricated) (?:all|everything|it all|all of (?:this|that|it)|this|that|"
    r"the above)|"
    r"(?:this|that|it) (?:is|was) (?:all )?(?:made up|invented|fabricated)|i (?:was|am) (?:just )?(?:lying|joking|kidding)"
    r")(?: (?:above|so far|here|before))?\s*[.!]*$")
#: A retraction that names the whole answer ("Everything I wrote above is false", "... in this answer ..."): it
#: reaches every sentence before it, in every paragraph; other retractions reach their own paragraph.
RETRACT_ANSWER = re.compile(r"\b(?:above|so far|this answer|the answer|my answer|whole answer|entire answer|"
                            r"everything (?:that )?(?:i|we) (?:have )?(?:just )?(?:wrote|written|said))\b")
#: A frame after the statement: "*that* heads run in parallel *is a myth*", "*the claim that* ... *is false*",
#: "*saying* the engineers assign each head a task *is a misunderstanding of* how transformers work".
TRAILING_FRAME_START = re.compile(r"\s*(?:(?:but|and|so|yet|honestly|frankly) ,?)?(?:the (?:claim|idea|belief|notion|view|"
                                  r"statement|assumption|story|suggestion|thought|myth|misconception|picture|image|"
                                  r"description|sentence|phrase|option|answer|wording)(?: that| of)?|that|(?:saying|claiming|"
                                  r"thinking|believing|assuming|describing|picturing|drawing|treating|calling|writing|"
                                  r"to (?:say|claim|think|believe|assume))(?: that)?|(?:anyone|anybody|someone|students|"
                                  r"people|those|answers|writers|an answer) (?:who|that|which) (?:says?|writes?|thinks?|"
                                  r"claims?|believes?)(?: that)?|[^\"]{0,50}?\"(?=[^\"]{12,}\"))\b|\s*\"(?=[^\"]{12,}\")")
#: "the heads taking turns *thing is a myth*": the whole segment before it is the wrong idea, named as a thing.
THING_FRAME = re.compile(r"\b(?:thing|stuff|idea|bit|business|notion|picture) (?:is|was) (?:(?:just|simply|totally|a "
                         r"total|complete) )?(?:a myth|wrong|false|nonsense|untrue|incorrect|made up|a misconception)\s*[.!]*\s*$")
TRAILING_FRAME_END = re.compile(
    r"\b(?:is|was) (?:(?:simply|just|quite|plainly|completely|totally|entirely|also|of course) )?(?:(?:a|an)(?: (?:common|"
    r"popular|widespread|persistent|old|urban|classic|frequent|total|complete))? (?:myth|misconception|mistake|error|"
    r"fallacy|falsehood|misunderstanding|fiction)(?: (?:of|about) [^.;!?]{1,60})?|false|wrong|untrue|incorrect|inaccurate|nonsense|mistaken|fiction|"
    r"made up|the (?:opposite|reverse) of (?:the truth|what is true|what happens)|not (?:true|correct|right|accurate|the case|so))"
    r"(?: too| as well| either)?\s*[.!;:]*\s*$|\b(?:is|are|was) (?:a |an |the )?(?:distractor|trap|red flag|picture to avoid|"
    r"how the (?:error|mistake|misconception) (?:usually |often |typically )?(?:shows|turns) up)\b[^.;!?]*[.!;:]*\s*$|"
    r"\b(?:misdescribes|misdescribe|misrepresents?|mixes up|mix up|confuses?|confused|conflates?|misreads?|"
    r"(?:has|have) confused|(?:comes?|came) from (?:confusing|mixing up|conflating)|earns? no (?:credit|marks?|points?)|"
    r"gets? (?:it|this|that|\w+ \w+) wrong)\b[^.;!?]*[.!;:]*\s*$|"
    r"\b(?:does|do|did) not (?:hold (?:up|water)|stand up|survive (?:a|any) "
    r"(?:look|test|check))\s*[.!;:]*\s*$|\b(?:has been|was|is) (?:debunked|disproved|disproven|refuted)\s*[.!;:]*\s*$")
#: A sentence that opens as a question ("Does each head ..., while another ...?"): up to its "?", all of it is asked.
QUESTION_OPEN = re.compile(r"^(?:and |but |so )?(?:do|does|did|is|are|was|were|can|could|would|will|should|has|have|"
                           r"had|how|why|who|what|which|where|when)\b")
#: A statement with a tag that asks only for agreement: "every lawyer on the team is a head, *right?*" asserts it
#: (not after an ironic "naturally", "obviously", "of course": "... is obviously what anyone would do, right?").
TAG_QUESTION = re.compile(r"^(?!.*\b(?:naturally|obviously|of course|sure|surely|clearly)\b).*"
                          r",\s*(?:right|yeah|ok|okay|correct|no|is not it|are not they|do not they|does not it)\s*\?\s*$")
#: A question asked for a yes or a no ("would a warm-up have saved it?"), not for an account ("why does it fail?").
YES_NO_OPEN = re.compile(r"^(?:and |but |so )?(?:do|does|did|is|are|was|were|can|could|would|will|should|has|have|"
                         r"had)\b")
#: One person or program with no authority whose words a student may only report (:data:`_SOURCE`); the step that
#: finds reported speech (.reported) uses it for the source named before a quote.
SOURCE = re.compile(rf"\b{_SOURCE}")
#: The label of a transcript turn spoken by such a source: "ChatGPT: ...", "AI: ...", "ChatGPT said:" (a label on its
#: own line, as chatgpt.com copies a chat), "Claude 3.5 Sonnet:", "ChatGPT (GPT-4o):" (normalised). Not "Model:",
#: "Answer:", "A:", the student's own "Me:" / "You said:", models that are the lesson's topic ("GPT-2:", "GPT:"), nor
#: "Perplexity:" (a measure of a language model).
OTHER_SPEAKER = re.compile(r"^\[?((?:the |my )?(?:chat ?gpt|gpt-?[45][\w.-]*|o[134](?:-mini|-pro)?|meta ai|qwen[\w.-]*|"
                           r"claude|gemini|bard|copilot|bing|deepseek|mistral|grok|llama[\w.-]*|ai|a\.i\.|bot|"
                           r"chat ?bot|assistant|ai assistant|llm|friend|classmate|roommate)"
                           r"(?:[ -](?:\d[\w.-]*|advanced|pro|sonnet|opus|haiku|flash|ultra|turbo|mini|plus))*"
                           r"(?: \((?:gpt|claude|gemini|llama|mistral|sonnet|opus|o\d)[^)]{0,20}\))?)"
                           r"(?: (?:said|says|wrote|writes|replied|answered))?"
                           r"\]?\s*:(?:\s+|$)")  # group 1: the speaker
#: A chatbot's name alone on its line, as a transcript's label with no colon ("**ChatGPT**", "[Claude]"): only names
#: that are nothing but a chatbot's (not "GPT-4", a model the lesson may name as a paragraph's title, nor "AI").
OTHER_SPEAKER_ALONE = re.compile(r"^\[?((?:chat ?gpt|claude|gemini|bard|copilot|grok|deepseek|meta ai|qwen[\w.-]*|"
                                 r"chat ?bot|ai assistant)(?: (?:said|says|wrote|replied|answered))?)\]?$")
#: What gives up an expectation later in its sentence ("I expected X, *but* it diverged"): without it, "I expected
#: post-norm to fail, and it did" stays the student's claim.
GIVEN_UP = re.compile(r"[,;]\s*(?:but|however|yet|instead)\b|\b(?:proved (?:me|it|that|us) wrong|turned out (?:to be )?"
                      r"(?:wrong|otherwise|false)|i was wrong|we were wrong|was not the case)\b")
#: The student endorsing what "X is said to ..." reports: "... and that is exactly what they do", "..., which it
#: does" (not "..., which they do not").
ENDORSED = re.compile(r"(?:\b(?:and|which|as)|[;:]) (?:that|this|it|they) (?:is|are|does|do|did)\b(?! not\b| wrong\b)"
                      r"(?: (?:exactly|indeed|just))?(?: (?:what|so|true|right|correct)\b)?(?![^.]*\b(?:not|wrong)\b)")
#: The student agreeing, in so many words, with what another says: "..., and that is exactly right", "..., which is
#: true", "..., and that matches my code" (not "and that is a common mistake", "and that is what the paper believed").
AGREED = re.compile(r"(?:\bwhich|(?:\band|[;:]) (?:that|this|it)) (?:is (?:exactly |indeed |quite |also )?(?:right|true|"
                    r"correct|the case)\b|(?:matches|agrees with|fits) (?:my|our|what i)\b)(?![^.]*\b(?:not|wrong|only)\b)")
#: Verbs of a source giving its answer ("ChatGPT answered", "it came back with"): :data:`REPORTING` and the reported
#: speech step (:mod:`.reported`) share them.
SAYING = (r"said|says|answered|answers|replied|replies|wrote|writes|told|tells|responded|responds|gave|gives|printed|"
          r"generated|produced|suggested|came back with|puts it|put it")
#: Words that say a source answered: the sentence that opens a quote ("This is what it answered:").
REPORTING = re.compile(rf"\b(?:{SAYING}|say|explained|explains|answer|reply|response|output|explanation|words|"
                       r"version)\b")
#: A turn of a written dialogue: "Student: ...", "Tutor: ..." (normalised, markdown gone); its group is the speaker.
#: Also any other label ("Note: ...", "In short: ..."): only :data:`PERSON` and :data:`OTHER_SPEAKER` name a speaker.
SPEAKER = re.compile(r"^([a-z][a-z.]*(?: [a-z][a-z.]*)?):\s+")
#: The label of a turn of the student's own or of a person in a transcript: "Me:", "You said:", "User:", "Q:".
PERSON = re.compile(r"^(?:me|i|you|user|student|human|myself|q|question|prompt|the student)(?: (?:said|asked|wrote))?"
                    r"\s*:(?:\s+|$)|^(?:user|you|human)(?: (?:said|asked|wrote))?$")
#: A line that names a chatbot as where the answer came from: "(Source: ChatGPT, copied.)", "Generated with Claude."
DECLARED = re.compile(r"^\(?\s*(?:sources?|credits?|generated (?:by|with)|written (?:by|with)|produced (?:by|with)|"
                      r"(?:copied|taken) from)\s*:?\s*(?:chat ?gpt|gpt-?[45][\w.-]*|claude|gemini|copilot|grok|"
                      r"deepseek|meta ai|qwen[\w.-]*|an? (?:ai|chatbot|llm|language model))\b")
