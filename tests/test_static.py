"""Static checks on a submission's source: forbidden imports and parsing source read as bytes."""
import ast
import os
import threading

import pytest

from grader.static import forbidden_imports, parse

SOURCE = '''\
import numpy as np
import torch
import torch.nn as nn
from torch import nn as nn2
from jax.numpy import x
mod = __import__("torch")
import importlib
tf = importlib.import_module("tensorflow")
from . import torch
from .torch import thing
from .. import jax
import torchvision_notes
import os, sklearn.linear_model
text = "import torch"  # import torch
def f():
    try:
        import jax
    except ImportError:
        pass
'''
# The lines above that import a banned package, counted by hand: 2 to 6, 8, 13 and 17.
EXPECTED_A = [
    "a.py line 2 imports torch",        # import torch
    "a.py line 3 imports torch",        # import torch.nn as nn
    "a.py line 4 imports torch",        # from torch import nn
    "a.py line 5 imports jax",          # from jax.numpy import x
    "a.py line 6 imports torch",        # __import__("torch")
    "a.py line 8 imports tensorflow",   # importlib.import_module("tensorflow")
    "a.py line 13 imports sklearn",     # import os, sklearn.linear_model
    "a.py line 17 imports jax",         # inside a function and a try block
]


@pytest.fixture
def banned(exercise3):
    """Exercise 3's own list, checked to hold what these tests rely on."""
    names = exercise3.forbidden_imports
    assert {"torch", "jax", "tensorflow", "sklearn"} <= set(names)
    assert "numpy" not in names and "torchvision_notes" not in names and "os" not in names
    return names


def test_finds_every_form_of_forbidden_import(tmp_path, banned):
    (tmp_path / "a.py").write_text(SOURCE)
    assert forbidden_imports(tmp_path, banned) == EXPECTED_A


def test_ignores_numpy_relative_imports_strings_and_lookalike_names(tmp_path, banned):
    (tmp_path / "ok.py").write_text(
        "import numpy\n"
        "import numpy.linalg as la\n"
        "from numpy import fft\n"
        "from . import torch\n"           # a sibling module that happens to be called torch
        "from .jax import helpers\n"
        "import torchvision_notes\n"      # starts with 'torch' but is another name
        "import tensorflowish\n"
        "s = 'import torch'\n"
        "# import jax\n"
        "getattr(x, 'torch')\n"
    )
    assert forbidden_imports(tmp_path, banned) == []


def test_reports_files_in_order_with_their_relative_path(tmp_path, banned):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "b.py").write_text("x = 1\nimport keras\n")
    (tmp_path / "a.py").write_text("import jax\n")
    (tmp_path / "pkg" / "helper.py").write_text("\n\nfrom torch.nn import functional as F\n")
    (tmp_path / "notes.txt").write_text("import torch\n")  # not Python: not read
    assert forbidden_imports(tmp_path, banned) == [
        "a.py line 1 imports jax",
        "b.py line 2 imports keras",
        f"pkg{os.sep}helper.py line 3 imports torch",
    ]


def test_only_the_given_names_are_banned(tmp_path):
    (tmp_path / "a.py").write_text("import torch\nimport scipy\n")
    assert forbidden_imports(tmp_path, ["scipy"]) == ["a.py line 2 imports scipy"]
    assert forbidden_imports(tmp_path, []) == []


def test_a_file_that_does_not_parse_is_skipped_not_fatal(tmp_path, banned):
    (tmp_path / "broken.py").write_text("import torch\ndef (:\n")
    (tmp_path / "fine.py").write_text("import jax\n")
    assert forbidden_imports(tmp_path, banned) == ["fine.py line 1 imports jax"]


# ---------------------------------------------------------------- source read as bytes
BOM_CRLF = b"\xef\xbb\xbf# a file saved by Notepad\r\nimport numpy as np\r\n\r\ndef f(x):\r\n    return x\r\nimport torch\r\n"
LATIN1 = "# -*- coding: latin-1 -*-\nNAME = 'été'\nimport jax\n".encode("latin-1")


def test_parse_accepts_utf8_bom_and_crlf(tmp_path):
    path = tmp_path / "attention.py"
    path.write_bytes(BOM_CRLF)
    tree = parse(path)
    assert isinstance(tree, ast.Module)
    func = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    assert (func.name, func.lineno) == ("f", 4)
    assert forbidden_imports(tmp_path, ["torch"]) == ["attention.py line 6 imports torch"]


def test_parse_accepts_latin1_with_a_coding_line(tmp_path):
    path = tmp_path / "attention.py"
    path.write_bytes(LATIN1)
    with pytest.raises(UnicodeDecodeError):
        LATIN1.decode("utf-8")  # so reading it as UTF-8 text would have failed
    tree = parse(path)
    assign = tree.body[0]
    assert assign.value.value == "été"
    assert forbidden_imports(tmp_path, ["jax"]) == ["attention.py line 3 imports jax"]


def test_parse_reports_syntax_errors_with_file_and_line(tmp_path):
    path = tmp_path / "attention.py"
    path.write_text("def softmax(x):\n    return x\n\ndef gelu(x)\n    return x\n")
    with pytest.raises(SyntaxError) as info:
        parse(path)
    assert info.value.lineno == 4
    assert info.value.filename == str(path)


def test_parse_refuses_a_file_larger_than_a_few_mib(tmp_path):
    path = tmp_path / "attention.py"
    path.write_bytes(b"#" * (5 * 2**20) + b"\nimport torch\n")
    with pytest.raises(SyntaxError, match="larger than"):
        parse(path)
    assert forbidden_imports(tmp_path, ["torch"]) == []  # skipped, like any file that does not parse


def _returns_within(fn, seconds=5.0):
    """fn() run in a daemon thread: its result or exception, or fail if it is still running after `seconds`."""
    box = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"did not return within {seconds} s"
    if "error" in box:
        raise box["error"]
    return box["value"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_or_device_named_py_does_not_hang_the_judge(tmp_path):
    # A submission is a folder the student controls: a FIFO would block open() forever,
    # a link to /dev/zero would be read forever.
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    (tmp_path / "real.py").write_text("import torch\n")
    try:
        assert _returns_within(lambda: forbidden_imports(tmp_path, ["torch"])) == ["real.py line 1 imports torch"]
        with pytest.raises(SyntaxError, match="is a symbolic link"):
            _returns_within(lambda: parse(tmp_path / "zero.py"))
        with pytest.raises(SyntaxError, match="not a regular file"):
            _returns_within(lambda: parse(tmp_path / "pipe.py"))
    finally:
        try:  # unblock a reader stuck on the FIFO if the code under test regressed
            os.close(os.open(tmp_path / "pipe.py", os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass  # no reader: nothing is stuck


def test_a_linked_source_is_never_read_through(tmp_path):
    """A submission's attention.py that links to a course file (a hidden test) must not be parsed: the
    import check once reported the hidden file's lines."""
    secret = tmp_path / "course" / "hidden.py"
    secret.parent.mkdir()
    secret.write_text("import os\nimport torch\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "attention.py").symlink_to(secret)
    (sub / "linked").symlink_to(secret.parent, target_is_directory=True)
    with pytest.raises(SyntaxError, match="is a symbolic link"):
        parse(sub / "attention.py")
    assert forbidden_imports(sub, ["torch"]) == []
