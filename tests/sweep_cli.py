"""The sweep's command line run in the test's own process."""

from bacepipe.sweep import app


def sweep_in_process(argv, capsys) -> tuple[int, str]:
    """``python -m bacepipe.sweep ARGV`` in this process: (exit status, stderr)."""
    try:
        code = app.main(list(argv))
    except SystemExit as stop:  # a job's one-line error (as the real command exits)
        code = stop.code
    return code, capsys.readouterr().err
