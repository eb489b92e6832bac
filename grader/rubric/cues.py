"""Cue tables of :mod:`.assertions`: the words that start a segment or a sub-clause, negate, frame, attribute,
doubt, suppose, refute or retract (all matched on normalised text, :func:`.read.normalise`).

The stances they give and their scopes are described in :mod:`.assertions`; this module holds only the patterns.
"""
from __future__ import annotations

import re

SEGMENT = re.compile(r";|:|\?|\b(?:but|however|whereas|while|although|though|in fact|actually|in reality)\b"
                      r"|\binstead\b(?! of\b)")
SUBCLAUSE = re.compile(r"[,()]|\s-\s|\b(?:and|or|so|because|since|which|who|that|when|as|thus|hence|then)\b")
NOT_NEGATION = re.compile(r"\bnot (?:only|just|merely)\b|\bno (?:more|less|fewer) than\b|\bno matter\b|"
                           r"\bwhether or not\b|\bno doubt\b|\bnothing but\b|\bnot least\b")
VERBAL = re.compile(r"\b(?:not|never|nor|neither|nobody|no one|no-one|none|nothing|no longer)\b")
PHRASAL = re.compile(r"\b(?:no|without|instead of|rather than)\b")
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
NP_NEW = re.compile(r"(?:every|each|all|both|it|they|he|she|we|you|this)$")

_I = r"(?:i|we)(?: personally)?"
#: Vague others (people, not heads or tokens) whose word a student may only report.
_WHO = (r"(?:people|folks|authors|students|sources|blogs?|blog posts|posts|tutorials|articles|websites|sites|videos|"
        r"researchers|writers|commentators|textbooks|books|papers|engineers|experts|users|friends|colleagues|"
        r"classmates|fans|critics|beginners|newcomers|practitioners)")
_OFTEN = r"(?: also| often| sometimes| usually| commonly| even| still| all)?"
_SAY = (r"(?:say|says|said|claim|claims|claimed|think|thinks|believe|believes|argue|argues|assume|assumes|suggest|"
        r"suggests|insist|insists|reckon|reckons|maintain|maintains|state|states|write|writes|wrote|expect|expects|"
        r"imagine|imagines|suppose|supposes)")
FRAMES: tuple[tuple[str, re.Pattern], ...] = tuple((stance, re.compile(p)) for stance, p in (
    ("framed", r"\b(?:a|one|the|another) (?:very )?(?:common |popular |frequent |widespread |classic |typical |"
               r"usual )?(?:misconception|myth|mistake|error|fallacy|misunderstanding|confusion|trap|pitfall)"
               r"s? (?:is|are|was)\b(?: that\b| to think\b)?"),
    ("framed", r"\b(?:it|this) is (?:a |an )?(?:common |popular |widespread )?(?:myth|misconception|mistake|"
               r"error|fallacy) (?:that|to (?:think|say|believe))\b"),
    ("framed", r"\b(?:wrongly|mistakenly|incorrectly|falsely|erroneously) (?:believe|believes|think|thinks|"
               r"assume|assumes|say|says|claim|claims|imagine|imagines)\b(?: that\b)?"),
    ("framed", r"\bcontrary to (?:popular belief|common belief|what (?:many|most|some) (?:people )?"
               r"(?:think|believe|assume|say))\b"),
    ("negated", r"\b(?:it|this) is (?:not|never) (?:true|the case|correct|right|so) that\b|\bit is (?:false|"
                r"wrong|incorrect|untrue) (?:that|to say)\b|\bnot the case that\b"),
    ("doubted", rf"\b{_I} (?:do not|did not|can not|would not|no longer) (?:believe|think|buy|accept|agree)\b"
                r"(?: that\b)?"),
    ("doubted", rf"\b{_I} (?:doubt|question)\b(?: that\b| whether\b)?|\bi am (?:not (?:sure|certain|convinced)|"
                r"unsure|unconvinced|sceptical|skeptical)\b(?: (?:that|whether|if)\b)?|\bnot sure (?:that|whether|"
                r"if)\b"),
    ("doubted", r"\b(?:nobody|no one|no-one|no study|no paper|no one ever) (?:has |have )?(?:ever )?(?:shown|"
                r"proved|proven|demonstrated|established|confirmed)\b(?: that\b)?"),
    ("doubted", r"\bit is (?:unclear|not clear|uncertain|doubtful|debatable|not obvious|not known|unknown|"
                r"an open question)\b(?: (?:whether|if|that)\b)?"),
    ("attributed", rf"\b(?:some|many|a few|few|several|most|certain|various)(?: (?:of (?:the|my|our) )?{_WHO})?{_OFTEN} "
                   rf"{_SAY}\b(?: that\b)?"),
    ("attributed", rf"(?<!\bthe )(?<!\bthese )(?<!\bthose )\b(?:others|someone|somebody|many people|most people|"
                   rf"{_WHO}){_OFTEN} {_SAY}\b(?: that\b)?"),
    ("attributed", rf"\bthey{_OFTEN} (?:say|says|claim|claims|believe|argue|insist|reckon|maintain|tell us)\b(?: that\b)?"),
    ("attributed", r"\bit (?:is|was|has been|gets) (?:also )?(?:often |commonly |sometimes |widely |frequently |usually )?"
                   r"(?:said|claimed|believed|thought|assumed|argued|suggested|rumou?red|reported)\b(?: that\b)?"),
    ("attributed", r"\b(?:apparently|supposedly|allegedly|reportedly|purportedly|rumou?r has it|so they say|so i am told|"
                   r"i (?:have )?heard|i read somewhere)\b(?: that\b)?"),
    ("attributed", rf"\baccording to (?:(?:some|many|a few|several|certain|various|its|their|his|her|my|our) )?"
                   rf"(?:{_WHO}|others|someone|somebody|rumou?r|popular|folk|the internet|online|hearsay)\b"
                   r"|\baccording to some\b"),
    ("attributed", r"\b(?:one|you|someone|a student|a reader) (?:might|may|could|would) (?:think|say|assume|"
                   r"expect|believe|guess|imagine|suppose)\b(?: that\b)?|\bit is (?:\w+ )?tempting to (?:think|say|assume|"
                   r"believe)\b(?: that\b)?"),
    ("question", r"\bwhether\b"),
))
CONDITION = re.compile(r"\b(?:if|unless|suppose|supposing|imagine|assuming|assume that|in case|provided that|"
                        r"as if|what if)\b")
HYPOTHETICAL_MODAL = re.compile(r"\b(?:would|could|might|would have|could have|might have)\b")
REFUTE_NEXT = re.compile(
    r"^(?:but |and |yet )?(?:this|that|it|which|the (?:idea|claim|belief)) (?:is|was|would be|is simply|is just) "
    r"(?:wrong|false|incorrect|untrue|mistaken|a myth|a misconception|a mistake|not (?:true|correct|right|so|"
    r"the case|how it works))\b|^(?:wrong|false|untrue|not (?:true|so)|nope|no)\s*[,.!:;]|"
    r"^(?:they|it|this|that|he|she) (?:do|does|did|is|are) not\s*(?:[,.!:;]|$|because\b)")
#: A sentence (or a clause after "but") that distances the student from what came before it.
DISTANCE = re.compile(
    r"(?:^|[;:]\s*|\b(?:but|yet|though|and|still|then again)\s+)(?:"
    r"(?:i(?: am|'m) (?:not (?:so |entirely |completely |really |at all |fully )?(?:sure|certain|convinced)|unsure|"
    r"unconvinced|sceptical|skeptical|doubtful)|i have (?:my |some |serious |real |strong )?doubts)"
    r"(?=\s*(?:[.!,;]|$|(?:about|of) (?:it|that|this|them|these|those|all (?:of )?this)\b|(?:that|if|whether) (?:it|this|"
    r"that|they|these|those) (?:is|are|was|were|holds?|works?)\b|(?:it|this|that|they) (?:is|are|was|were|holds?)\b|"
    r"either way|at all|yet))|"
    r"i (?:doubt|question) (?:it|that|this|them|these|those)\b|i (?:do not|did not) (?:buy|believe|trust) (?:it|that|this|them)\b|"
    r"(?:that|this|it) is (?:only |just )?(?:their|his|her|the authors'|other people's) (?:claim|view|opinion|idea|story|theory)|"
    r"i would not (?:commit|bet|swear|vouch|rely|put money)|i have not (?:checked|verified|confirmed|tested|looked)|"
    r"i (?:can not|could not) (?:confirm|verify|check|vouch|say for sure)|i do not (?:really )?know\b|"
    r"i (?:will |would |shall )?leave (?:that|this|it|the rest) to|(?:that|this) is (?:what|how) (?:they|people|some|"
    r"others) (?:say|claim|think|believe|see it)|(?:maybe|perhaps|possibly|who knows|not sure|no idea|hard to say|"
    r"or not)\s*[.!?]*$)")
#: A distancing sentence that reaches every sentence of its paragraph before it, not just the last one.
DISTANCE_ALL = re.compile(r"\b(?:any|all|none|most|each) of (?:this|that|these|those|it|them)\b|\ball (?:of )?this\b|"
                           r"\bthese (?:claims|statements|ideas|things|points|views)\b")


REFUTE_SAME = re.compile(r"^\s*(?:and |but )?(?:that|this|which|it) (?:is|was) (?:simply |just )?(?:wrong|false|"
                          r"incorrect|untrue|a myth|a misconception|a mistake|not (?:true|correct|right))\b")


