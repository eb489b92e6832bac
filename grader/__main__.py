"""``python -m grader`` is the ``grader`` command."""
from .cli import main

main()
