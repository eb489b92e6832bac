#!/usr/bin/env bash
# Gradescope autograder set-up: run once, as root, when Gradescope builds the autograder's image
# (an Ubuntu base image: 22.04 by default, chosen on the Configure Autograder page). Installs
# Python 3.11+, the CPU build of torch and the grader shipped in this zip (course/: the grader,
# @EXERCISE@ with its hidden tests), in a virtual environment. Never asks anything.
set -euo pipefail
cd "$(dirname "$0")"
ROOT="${AUTOGRADER_ROOT:-/autograder}"
export DEBIAN_FRONTEND=noninteractive PIP_NO_INPUT=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1

apt-get update -qq
# bubblewrap: used when the container lets it create namespaces; otherwise run_autograder's
# --isolation container takes the plain child process, as an unprivileged user of its own.
apt-get install -y -qq python3 python3-venv bubblewrap >/dev/null
PYTHON=python3
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  # Ubuntu 22.04's python3 is 3.10; the grader needs 3.11 (tomllib), which 22.04 has as python3.11.
  if ! apt-get install -y -qq python3.11 python3.11-venv >/dev/null; then
    echo "setup.sh: this base image has neither Python 3.11+ nor a python3.11 package; choose Ubuntu 22.04" \
         "or later as the base image on Gradescope's Configure Autograder page" >&2
    exit 1
  fi
  PYTHON=python3.11
fi

"$PYTHON" -m venv "$ROOT/venv"
"$ROOT/venv/bin/pip" install -q --upgrade pip
# The CPU build first, so the grader's torch==@TORCH@ requirement is already met (no CUDA wheels).
"$ROOT/venv/bin/pip" install -q "torch==@TORCH@" --index-url https://download.pytorch.org/whl/cpu
"$ROOT/venv/bin/pip" install -q ./course
# The sandbox's unprivileged user runs this Python when bubblewrap cannot work, but never loads the
# packages @EXERCISE@ forbids, even past its import block (the judge, as root, still does).
chmod -R a+rX "$ROOT/venv"
"$ROOT/venv/bin/python" -c 'import sys; from grader.sandbox.container import withhold_packages as w
print("withheld from the sandbox:", *w(tuple(sys.argv[1:])) or ["nothing"])' @FORBIDDEN@
"$ROOT/venv/bin/python" -c "import grader, torch, numpy; print('grader ready, torch', torch.__version__)"
