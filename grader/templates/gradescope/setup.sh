#!/usr/bin/env bash
# Gradescope autograder set-up: run once, as root, when Gradescope builds the autograder's image
# (Ubuntu base image). Installs Python 3.11+, the CPU build of torch and the grader shipped in this
# zip (course/: the grader, @EXERCISE@ with its hidden tests), in a virtual environment.
set -euo pipefail
cd "$(dirname "$0")"
ROOT="${AUTOGRADER_ROOT:-/autograder}"
export DEBIAN_FRONTEND=noninteractive

apt-get update -qq
# bubblewrap: used when the container lets it create namespaces; otherwise run_autograder's
# --isolation container takes the plain child process (each submission has a container of its own).
apt-get install -y -qq python3 python3-venv bubblewrap >/dev/null
PYTHON=python3
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  # Ubuntu 22.04's python3 is 3.10; the grader needs 3.11 (tomllib).
  apt-get install -y -qq python3.11 python3.11-venv >/dev/null
  PYTHON=python3.11
fi

"$PYTHON" -m venv "$ROOT/venv"
"$ROOT/venv/bin/pip" install -q --upgrade pip
# The CPU build first, so the grader's torch==@TORCH@ requirement is already met (no CUDA wheels).
"$ROOT/venv/bin/pip" install -q "torch==@TORCH@" --index-url https://download.pytorch.org/whl/cpu
"$ROOT/venv/bin/pip" install -q ./course
"$ROOT/venv/bin/python" -c "import grader, torch, numpy; print('grader ready, torch', torch.__version__)"
