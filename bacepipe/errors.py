"""The one exception type for bad input: it names the field and the problem."""


class InputError(ValueError):
    """Bad input. ``str(err)`` is one line: ``<field>: <problem>``.

    Command-line entry points print it to stderr and exit with status 2.
    """

    def __init__(self, field: str, problem: str):
        self.field = field
        self.problem = problem
        super().__init__(f"{field}: {problem}" if field else problem)

    def __reduce__(self):  # pickles across worker processes (loky, dask)
        return (type(self), (self.field, self.problem))


class InvariantViolation(RuntimeError):
    """A simulated schedule broke an invariant of SPEC §4 (found by ``validate=true``): a bug in
    the simulator, not bad input. ``str(err)`` is one line naming topology, scheduler and job.

    Command-line entry points print it to stderr and exit with status 3.
    """


class WorkerLost(RuntimeError):
    """Worker processes kept dying on the same chunks after the allowed retries (a crash, or
    the OS killing them for memory). ``str(err)`` is one line.

    Command-line entry points print it to stderr and exit with status 4.
    """


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) stopped a sweep; ``str(err)`` says what was written and how to resume.

    Command-line entry points print it to stderr and exit with status 130.
    """
