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
