"""Messages in Python's words: the checks shared with the command line (mpc_auc.csv_io, protocols.inputs) name its
options (``--score-range``, ``--client-col``); raised inside a Python call, the same message names the keyword the
caller passes instead (docs/api.md, "Results are numbers", its last paragraph)."""
import contextlib
import re

from .csv_io import LIMIT_OPTIONS
from .protocols.errors import InputError

KEYWORDS = (  # a command-line option in a shared message -> what a Python caller passes
    ("--score-range LO HI", "context=Context(score_range=(LO, HI))"),
    ("--client-col", "client_col="),
    ("--score-col", "score_col="),
    ("--label-col", "label_col="),
    ("--id-col", "id_col="),
    ("--weight-col", "weight_col="),
    ("--positive-label", "positive_label="),
    ("--sep", "sep="),
    ("--max-exact K", "ClientTerms(max_exact=K)"),
    ("--max-exact 0", "ClientTerms(max_exact=0)"),
    ("--max-exact", "ClientTerms.max_exact"),
    ("--max-epsilon", "ClientTerms.max_epsilon"),
    ("--require-security", "ClientTerms.require_security"),
)
LIMIT_FLAGS = re.compile("|".join(re.escape(f"{flag} N, or ") for flag, _ in LIMIT_OPTIONS.values()))


def in_python_words(message: str) -> str:
    """``message`` with each command-line option it names replaced by the Python keyword."""
    message = LIMIT_FLAGS.sub("", message)
    for flag, keyword in KEYWORDS:
        message = re.sub(re.escape(flag) + r"(?![\w-])", keyword, message)
    return message


@contextlib.contextmanager
def python_words():
    """Re-raise an InputError of the block in Python's words (the same type, the same message otherwise)."""
    try:
        yield
    except InputError as err:
        worded = in_python_words(str(err))
        if worded == str(err):
            raise
        raise type(err)(worded).with_traceback(err.__traceback__) from None
