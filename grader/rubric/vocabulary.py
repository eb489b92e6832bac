"""The words the rubric's topic rules know: the lesson's anchors and picture, and general English.

The rules of :mod:`.topic` and :mod:`.mixing` decide what a sentence is about with no list of foreign words: only
lists of the lesson's words (:data:`STRONG` and :data:`WEAK` anchors, the picture's words :data:`PICTURE`, nouns
that keep a phrase in the domain :data:`DOMAIN_NOUNS`) and of general ones (:data:`GENERIC`, :data:`ADJECTIVES`,
:data:`PARTICLES`, :data:`PREPOSITIONS`). Every word is lower case, as in a normalised sentence (.read).
"""
from __future__ import annotations

import re

from .read import FUNCTION_WORDS

#: Words that make a sentence the lesson's alone ("attention", "token", "gradient", "learning rate").
STRONG = re.compile(
    r"\b(?:(?:self-|multi-head |masked )?attention|attends?|attending|attended|transformers?|tokens?|embeddings?|"
    r"d_model|d_k|d_v|d_head|softmax|quer(?:y|ies)|mlps?|ffns?|feed-?forward|w_?[oqkv]|w_i_[qkv]|"
    r"layer ?norm\w*|encoders?|decoders?|logits?|gradients?|backprop\w*|concatenat\w*|vectors?|matri(?:x|ces)|"
    r"subspaces?|multi-head|qkv|causal\w*|bidirectional|unigrams?|bigrams?|learning rate|warm-?ups?|"
    r"post-?norm|pre-?norm|head_i|head_\d+|positional|(?:letter|character)[- ]frequenc\w*|cross-?entropy|jacobians?|"
    r"residual (?:connections?|streams?)|skip[- ]connections?|(?:train(?:ing)?|validation|val) loss(?:es)?|"
    r"backward signal|no-?res|no-skips?)\b")
#: Words of the lesson that also have everyday senses ("head", "block", "keys"): two make a sentence the lesson's.
WEAK = re.compile(
    r"\b(?:gpt\S*|bert\S*|heads?|layers?|blocks?|residuals?|models?|weights?|keys?|values?|projections?|masks?|masked|norms?|"
    r"networks?|neural|training|trained|parameters?|positions?|sequences?|dimensions?|width|outputs?|inputs?|"
    r"skips?|stream|loss|sublayers?|sub-layers?|linear|normali[sz]\w*|compute|flops)\b")
#: A model's name, a weak anchor only beside :data:`NAME_CONTEXT` ("Bert looks both ways" is a person).
NAME = re.compile(r"\b(?:gpt\S*|bert\S*)")
#: Words that make a model's name mean the model (as does any strong anchor): "BERT reads the whole sentence".
NAME_CONTEXT = re.compile(
    r"\b(?:models?|masks?|masked|sentences?|sequences?|texts?|words?|context|inputs?|pre-?train\w*|trained|training|"
    r"fine-?tun\w*|language|predict\w*|generat\w*|classif\w*|parameters?|heads?|layers?|weights?|blocks?|"
    r"positions?|gpt\S*|bert\S*)\b")
#: The lesson's picture, a team reviewing one contract (exercise 1's question 1): never foreign.
PICTURE = re.compile(
    r"\b(?:persons?|people|team|teams|members?|lawyers?|readers?|reviewers?|colleagues?|experts?|associates?|"
    r"teammates?|workers?|analysts?|proofreaders?|committee|contracts?|documents?|notes?|reviews?|picture|analogy|metaphor|"
    r"everyone|everybody|specialists?)\b")

#: Nouns that may follow "of" after a domain word without leaving the domain (besides anchors and picture words).
DOMAIN_NOUNS = frozenset("""
size width sentence sentences text word words computation computations signal information data number numbers
feature features space input inputs output outputs result results pattern patterns relation relations
relationship relationships dimension dimensions part parts slice slices chunk chunks piece pieces them it each
all one two three four eight twelve h n x f i layer stack copies copy work cost compute point job jobs role roles
score scores probability probabilities distribution distributions representation representations activation
activations context meaning sum sums product products average mixture combination speed memory
run runs table experiment experiments step steps curve curves plot plots schedule rate rates level levels depth
character characters letter letters frequency frequencies corpus batch batches epoch epochs iteration iterations
baseline seed seeds path paths way route direction scale magnitude variance mean noise start end update updates
connection connections addition additions shortcut shortcuts image images pixel pixels filter filters state states
bottleneck gelu relu cnn rnn lstm code function functions equation equations formula grader setting settings dataset
identity branch branches pass passes trunk grad grads optimiser optimizer adam plateau prediction predictions error errors
future check factor factors derivative derivatives term terms plus init char chars
""".split())

def is_domain_word(word: str) -> bool:
    """Whether ``word`` (lower case; a possessive 's is dropped) is an anchor, a picture word, a domain noun or a
    function word: a word that keeps a phrase in the lesson."""
    word = re.sub(r"'s?$", "", word)
    return bool(STRONG.fullmatch(word) or WEAK.fullmatch(word) or PICTURE.fullmatch(word)) \
        or word in DOMAIN_NOUNS or word in FUNCTION_WORDS


#: Nouns about the lesson itself or too general to name a foreign thing ("the paper", "the same", "the rest").
#: ... and the sources, tools and systems a student names as actors ("the video says ...", "the checkpoint stacks 12
#: blocks", "my bot runs four heads in parallel"; two reviews of 2026-12-07 found them read as foreign things); and
#: the words that announce where a picture fails ("the biggest flaw: no one decides the heads' tasks").
GENERIC = frozenset("""
lecture lecturer lectures teacher professor lesson class course paper papers article book textbook slides figure diagram example
examples picture analogy question answer exercise author authors end rest way idea point case time start
beginning top bottom thing things difference reason
noun nouns pronoun pronouns verb verbs subject subjects object objects adjective adjectives adverb clause phrase
grammar syntax meaning name names term terms date dates detail details kind kinds type types order
lot bit bunch couple number part parts sort form set pair series variety range amount amounts day days history
middle past year years others root division labour labor
source story design trick problem downside upside limit maximum minimum price step findings result standard
variant variants version versions placement setup choice method approach recipe model one ones designers engineers
video chapter appendix blog post homework exam assignment tutorial notebook colab script code config checkpoint kernel
einsum matmul profiler debugger benchmark cluster laptop gpu cpu repo repository library framework implementation
pytorch plot chart dashboard spreadsheet instructor supervisor tutor seminar workshop website page section table
bot chatbot app application pipeline server accelerator compiler prototype node chip computer software codebase
flaw flaws mismatch caveat caveats weakness weaknesses drawback drawbacks snag limitation limitations
shortcoming shortcomings nuance subtlety exception exceptions hitch
""".split())
#: Words that lead to the noun of a phrase rather than being it ("the same input", "the learned weights").
ADJECTIVES = frozenset("""
same whole previous next first last full entire exact main usual final new old most left right big small large
wide narrow long short high low good bad key real true false only basic simple important few several original
own single second third fourth later earlier larger smaller deeper higher lower bigger longer shorter wider better
worse modern nice neat cheap early earliest late latest overall latter former upper inner outer extra other plain raw pure
clear strong weak tiny huge average random mere sheer
""".split())
ADJECTIVE = re.compile(r"(?:ed|ing|al|ive|ous|ic|ful|able|ible|ent|ant|ary|est)$")
#: Words that are no noun where a phrase's head would stand ("the gradient *back*", "the *backward* pass").
PARTICLES = frozenset("back down up out away forward forwards backward backwards along around off too".split())
PREPOSITIONS = frozenset("of to in on at by for with from into onto over under between among across through "
                          "about as than like after before during within without per via".split())

#: Endings of abstract nouns ("computation", "similarity") and digits: no foreign thing.
ABSTRACT = re.compile(r"(?<=\w{3})(?:tion|sion|ity|ness|ment|ance|ence|ism|ship|ing|ure|ics|ogy|hood)$|[0-9]")


def is_general(word: str) -> bool:
    """Not a foreign thing: a domain, picture or general word, an adjective, or an abstract noun ("-tion", "-ity")."""
    return (word in GENERIC or word in ADJECTIVES or bool(ADJECTIVE.search(word)) or is_domain_word(word)
            or bool(ABSTRACT.search(word)) or len(word) < 3 or "-" in word or word.endswith(("ly", "wise")))



#: Words with which a student says they compare their own picture with the model ("like a panel of experts", "think
#: of the stream as a river", "*just as* each head has its own ...", "*likewise*"); not "would like", "I like", "like
#: to", nor "picture" or "analogy", which name the lesson's own picture too.
COMPARING = re.compile(r"\b(?:(?<!would )(?<!'d )(?<!\bi )(?<!\bwe )(?<!\byou )(?<!\bthey )like(?! to\b)|as if|as though|"
                       r"just as|similar(?:ly)? to|resembl\w*|think of|imagine|acts? as|works? as|serves? as|plays? the|"
                       r"in the same way|likewise)\b")
#: "is a", "are the", "becomes a": a term set equal to a thing ("each head is a musician").
IS_A = re.compile(r"\b(?:is|are|=|becomes?)\s+(?:just |simply |basically )?(?:a|an|one|the|like|our|my)\s")
