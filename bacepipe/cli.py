"""Shared command-line plumbing: bad input is one line on stderr and exit status 2."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from bacepipe.errors import InputError

EXIT_BAD_INPUT = 2
#: A simulated schedule broke a SPEC §4 invariant (``validate=true``): a bug, not bad input.
EXIT_INVARIANT = 3
#: Worker processes kept dying after the allowed retries.
EXIT_WORKER_LOST = 4
#: Stopped by Ctrl-C (SIGINT), as a shell reports it (128 + 2).
EXIT_INTERRUPTED = 130


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are a single line (no usage dump), exit status 2."""

    def error(self, message: str):
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: {message}\n")


def first_line(err: BaseException) -> str:
    """The first line of ``err``'s message (its type name when the message is empty)."""
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def run_cli(prog: str, body: Callable[[], int], *,
            io_errors: tuple[type[BaseException], ...] = (), io_field: str = "") -> int:
    """Run ``body``; an InputError becomes ``prog: field: problem`` on stderr and exit status 2.

    Exceptions of ``io_errors`` (e.g. OSError, a reader's parse error) are bad input too: they
    become ``prog: io_field: <first line of the message>`` and exit status 2.
    """
    try:
        return body()
    except InputError as err:
        print(f"{prog}: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except io_errors as err:
        print(f"{prog}: {io_field}: {first_line(err)}", file=sys.stderr)
        return EXIT_BAD_INPUT
