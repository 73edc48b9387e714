"""What users can cause, as one tree; the CLI prints each as one line, without a traceback.

    EpbenchError
     +-- InputError      a file, argument or environment that is wrong (names the file/pointer)
     +-- RunError        a run that cannot start or go on (endpoint unreachable, bad plan)

Bugs are not in this tree: they still raise their own exceptions.
"""


class EpbenchError(Exception):
    """Base of every error a user can cause and fix."""


class InputError(EpbenchError):
    """A file, argument or environment variable is wrong; the message names which and where."""


class RunError(EpbenchError):
    """A run cannot start or continue; the message says what to do."""
