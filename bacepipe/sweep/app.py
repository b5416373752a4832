"""The Hydra app behind ``python -m bacepipe.sweep``: one job = one sweep point.

``python -m bacepipe.sweep [key=value ...]`` runs one point; ``-m`` runs a multirun (one Hydra
job per point, ``hydra/launcher=joblib`` runs them in parallel); ``-m +preset=fig5`` runs a
figure's grid from ``sweeps/preset/``; ``-m +preset=all`` runs every figure preset in turn.

Bad input is one line on stderr and exit status 2, before any work: sweep values given on the
command line are checked before Hydra starts (so ``-m bandwidth_scale=1,-1`` fails before the
first point), the composed config is checked again in each job, and Hydra's own composition
errors are caught and shortened to one line. A results directory that cannot be written is bad
input too (exit 2, naming the path). Other stops, each one line on stderr (docs/reliability.md):

- 3: ``validate=true`` found a schedule that breaks SPEC §4 (topology, scheduler, job named);
- 4: worker processes kept dying on the same chunks after the retries;
- 130: Ctrl-C; the chunks written are complete, and the same command resumes.

Hydra keeps no folder of its own (conf/config.yaml): a run's record is the manifest of each
point. A multirun's sweeper still needs a folder, so :func:`main` gives it a scratch folder and
removes it when the command ends, however it ends but SIGKILL (a refused command leaves
nothing behind).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from bacepipe.cli import EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_INVARIANT, EXIT_WORKER_LOST
from bacepipe.core.compile_notice import announce_on
from bacepipe.errors import InputError, InvariantViolation, WorkerLost
from bacepipe.settings import SETTINGS, help_text
from bacepipe.sweep.config import CONF_DIR, SWEEPS_DIR, check_value, register_configs
from bacepipe.sweep.config import validate as validate_config

PROG = "bacepipe.sweep"
PRESET_DIR = SWEEPS_DIR / "preset"

register_configs()
# conf/config.yaml adds sweeps/ to Hydra's search path through this resolver: the path must be
# absolute, and only Python knows where the repository is.
OmegaConf.register_new_resolver("bacepipe_sweeps_dir", lambda: str(SWEEPS_DIR), replace=True)
# --help lists every setting from its declaration (bacepipe.settings).
OmegaConf.register_new_resolver("bacepipe_settings_help", help_text, replace=True)


def _hydra_info() -> dict:
    """Hydra's view of this job, for the manifest (Hydra keeps no record of its own)."""
    hc = HydraConfig.get()
    return {"hydra": {"mode": str(hc.mode.name), "overrides": list(hc.overrides.task),
                      "job_num": hc.job.get("num")}}


@hydra.main(config_path=str(CONF_DIR), config_name="config", version_base="1.3")
def task(cfg: DictConfig) -> None:
    """Validate the composed config, run the point, print where it went and its summary."""
    from bacepipe.sweep.engine import run_point
    from bacepipe.sweep.summary import format_summary

    hc = HydraConfig.get()
    if hc.mode.name == "RUN" and hc.sweeper.get("params"):
        print(f"{PROG}: note: this preset sweeps {', '.join(hc.sweeper.params)}; add -m to run "
              "its grid (running one point now)", file=sys.stderr)
    try:
        settings = validate_config(cfg)
        report = run_point(settings, extra_manifest=_hydra_info())
    except InputError as err:
        # SystemExit, not an exception: Hydra would print a second line for a failed job.
        print(f"{PROG}: {err}", file=sys.stderr, flush=True)
        raise SystemExit(EXIT_BAD_INPUT) from None
    except InvariantViolation as err:
        print(f"{PROG}: {err}", file=sys.stderr, flush=True)
        raise SystemExit(EXIT_INVARIANT) from None
    except WorkerLost as err:
        print(f"{PROG}: {err}", file=sys.stderr, flush=True)
        raise SystemExit(EXIT_WORKER_LOST) from None
    except KeyboardInterrupt as err:
        print(f"{PROG}: interrupted{f': {err}' if str(err) else ''}", file=sys.stderr,
              flush=True)
        raise SystemExit(EXIT_INTERRUPTED) from None
    s = report.settings
    print(f"point {report.paths.point_id}: scenario={s.scenario_label} "
          f"bandwidth_scale={s.bandwidth_scale:g} gpu_scale={s.gpu_scale:g} "
          f"num_jobs={s.num_jobs} · {s.topologies} topologies × {len(s.schedulers)} schedulers "
          f"· {report.chunks_run} of {report.chunks_total} chunks run "
          f"(a chunk: a topology range of one scheduler) · {report.wall_s:.1f} s")
    print(f"results: {report.paths.runs}")
    print(format_summary(report.summary), flush=True)


# --------------------------------------------------------------------------- command line

#: Hydra flags that take the next argument as their value.
_FLAGS_WITH_VALUE = {"--cfg", "-c", "--package", "-p", "--config-path", "-cp", "--config-name",
                     "-cn", "--config-dir", "-cd", "--experimental-rerun", "--info", "-i"}


def _overrides(argv: list[str]) -> list[str]:
    """The ``key=value`` arguments of a Hydra command line (flags and their values dropped)."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg.startswith("-"):
            skip = arg in _FLAGS_WITH_VALUE
        elif "=" in arg:
            out.append(arg)
    return out


def precheck(argv: list[str]) -> None:
    """Check every value of the sweep's own keys on the command line, sweeps included, and
    the name of a preset (a file of sweeps/preset/, or ``all``).

    Raises
    ------
    InputError
        The first bad value, a key the sweep does not know, or an unknown preset.
    """
    parser = OverridesParser.create()
    # In declaration order, as validate checks them: plug-ins before the schedulers they add.
    order = {name: i for i, name in enumerate(SETTINGS)}
    texts = sorted(_overrides(argv),
                   key=lambda t: order.get(t.lstrip("+~").split("=", 1)[0].split(".")[0],
                                           len(order)))
    for text in texts:
        try:
            override = parser.parse_override(text)
        except HydraException as err:
            key = text.split("=", 1)[0].lstrip("+~")
            raise InputError(key, f"cannot parse {text!r}: {_first_line(err)}") from None
        key = override.key_or_group
        if not key:
            raise InputError(text, "no key before '='")
        if key == "hydra.job.chdir" and str(override.value()).lower() != "false":
            raise InputError(key, "the sweep runs where it is started (results_dir says where "
                             "its results go)")
        if key.startswith("hydra") or "/" in key or override.package:
            continue
        if override.is_sweep_override():
            if not override.is_discrete_sweep():
                continue
            values = list(override.sweep_iterator())
        elif override.is_delete():
            continue
        else:
            values = [override.value()]
        if key == "preset":
            known = sorted({p.stem for p in PRESET_DIR.glob("*.yaml")} | {"all"})
            for value in values:
                if str(value) not in known:
                    raise InputError(key, f"unknown preset {value!r} (known: {', '.join(known)})")
            continue
        if key not in SETTINGS and not key.startswith("hardware."):
            raise InputError(key, f"unknown key (known: {', '.join(sorted(SETTINGS))}, "
                             "hardware.*)")
        for value in values:
            check_value(key, value)


def _first_line(err: BaseException) -> str:
    """The first line of an error's text, control characters escaped (``\\x00``)."""
    text = str(err).strip()
    line = text.splitlines()[0].strip() if text else type(err).__name__
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in line)


def _scratch_override(scratch: Path) -> str:
    """``hydra.sweep.dir=<scratch>``, quoted for Hydra's override grammar."""
    quoted = str(scratch).replace("'", "\\'")
    return f"hydra.sweep.dir='{quoted}'"


def _remove_scratch(scratch: Path) -> None:
    """Remove what Hydra made in the scratch folder: ``multirun.yaml`` and the empty folder of
    each job. Anything else (results sent there by ``results_dir=${hydra:runtime.output_dir}``)
    is kept, with the folders that hold it."""
    (scratch / "multirun.yaml").unlink(missing_ok=True)
    for top, _, _ in os.walk(scratch, topdown=False):
        try:
            os.rmdir(top)
        except OSError:
            pass


def _run_all(argv: list[str]) -> int:
    """``+preset=all``: one multirun per figure preset (``fig*``) of sweeps/preset/, in order."""
    names = sorted(p.stem for p in PRESET_DIR.glob("fig*.yaml"))
    if "-m" not in argv and "--multirun" not in argv:
        argv = ["-m", *argv]
    for name in names:
        args = [f"+preset={name}" if a == "+preset=all" else a for a in argv]
        print(f"== preset {name}: python -m {PROG} {' '.join(args)}", flush=True)
        code = subprocess.call([sys.executable, "-m", PROG, *args])
        if code:
            return code
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m bacepipe.sweep``; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if "+preset=all" in argv:
        return _run_all(argv)
    try:
        precheck(argv)
    except InputError as err:
        print(f"{PROG}: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    # With HYDRA_FULL_ERROR set, Hydra raises instead of printing several lines and exiting 1;
    # we then print one line and exit 2. A user who sets it gets Hydra's full trace.
    own_errors = "HYDRA_FULL_ERROR" not in os.environ
    if own_errors:
        os.environ["HYDRA_FULL_ERROR"] = "1"
    scratch = None
    try:
        keys = {o.lstrip("+~").split("=", 1)[0] for o in _overrides(argv)}
        multirun = {"-m", "--multirun"} & set(argv) or "hydra.mode" in keys
        if multirun and "hydra.sweep.dir" not in keys:
            scratch = Path(tempfile.mkdtemp(prefix="bacepipe-sweep-"))
            argv = [*argv, _scratch_override(scratch)]
        sys.argv = [sys.argv[0], *argv]
        with announce_on(sys.stderr):
            task()
    except KeyboardInterrupt:  # before or between the points of a multirun
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # stdout went to a closed pipe (`| head`): not an error of the sweep; silence the
        # interpreter's own failing flush at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (HydraException, OmegaConfBaseException) as err:
        if not own_errors:
            raise
        cause = err.__cause__
        detail = f" ({_first_line(cause)})" if cause is not None else ""
        print(f"{PROG}: {_first_line(err)}{detail}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as err:
        # Hydra's own output folder (hydra.run.dir, hydra.sweep.dir given on the command line,
        # or the scratch folder): the sweep's results_dir errors are InputErrors already.
        if not own_errors:
            raise
        where = f"{err.filename!r}: " if err.filename else ""
        print(f"{PROG}: cannot write Hydra's output folder {where}{err.strerror or err} "
              "(point hydra.run.dir / hydra.sweep.dir, or TMPDIR, at a writable folder)",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    finally:
        if own_errors:  # leave the environment as found (main may be called again in-process)
            os.environ.pop("HYDRA_FULL_ERROR", None)
        if scratch is not None:
            _remove_scratch(scratch)
    return 0
