"""Fuzzing the Hydra command line of ``python -m bacepipe.sweep``: random keys and values (wrong
types, missing and extra keys, 0, negatives, NaN, 1e308, huge counts, empty lists, odd strings)
end in a valid result or in one line naming the field, exit status 2 — never a traceback, a
hang, a warning or a numba error. Huge counts are refused by validation, never attempted.

Most examples stop at the in-process checks the command runs before any work (``precheck``,
Hydra's composition, ``validate``); a smaller set runs the whole command in-process
(``app.main``) on 2 topologies; a few cases run as real subprocesses. The scenario-file fuzz is
tests/test_fuzz.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import pytest
from hydra import compose, initialize_config_dir
from hydra.errors import HydraException
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from omegaconf.errors import OmegaConfBaseException
from tiers import examples

from bacepipe.errors import InputError
from bacepipe.settings import SETTINGS
from bacepipe.sweep import app
from bacepipe.sweep.config import CONF_DIR, MAX_CHUNK_BYTES, MAX_CHUNKS, chunk_bytes
from bacepipe.sweep.config import validate as validate_config

PROG = "bacepipe.sweep: "
FIXTURES_OK = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
KEYS = [*SETTINGS, "hardware.mfu", "hardware.seq_len", "hardware.gpu_tflops",
        "hardware.micro_batch_size", "hardware.gpu_mem_gb", "hardware.volts", "surprise",
        "Topologies"]
WORDS = ["0", "-1", "1", "2", "3", "nan", "inf", "-inf", "1e308", "-1e308", "1e-308", "2.5",
         "1000000", "1000000000000", "100000", "true", "false", "null", "''", "' '", "abc",
         "[]", "[lcf]", "[lcf,lcf]", "[bace_pipe,ldf]", "[lcf,[x]]", "[1,2]", "{}", "{a:1}",
         "{mfu:2}", "loky", "dask", "random", "paper", "motivation", "aws10", "x.yaml", "geo",
         "none", "poisson", "trace", "batch", "business", "flat", "adam_mixed", "record",
         "error", "${oops}", "${now:%Y}", "ünï", "'a b'", "[", "1,2", '"q"', "\\x00", "'\x00'"]
SMALL_INTS = [-1, 0, 1, 2, 3, 10**6, 10**12]
#: Valid, cheap values per key (extremes included), so that many examples get past validation.
GOOD = {
    "scenario": ["random", "paper", "motivation", "aws10"],
    "bandwidth_scale": ["0.3", "1.5", "1e-6", "1000000"], "gpu_scale": ["0.25", "1000", "1e-300"],
    "num_jobs": ["1", "3", "24"], "num_regions": ["1", "2", "50"], "topologies": ["1", "3"],
    "seed": ["0", "9223372036854775807"], "schedulers": ["[lcf]", "[bace_pipe,cr_ldf]"],
    "workers": ["1", "null"], "chunk_size": ["1", "1000000"], "backend": ["loky"],
    "dask_address": ["null"], "save_jobs": ["true", "false"], "validate": ["true"],
    "unplaceable": ["record", "error"], "results_dir": ["res2"], "progress": ["false"],
    "arrivals": ["batch", "poisson", "null"], "arrival_rate_per_h": ["0.001", "1000000", "0.5"],
    "trace": ["null"], "latency": ["geo", "none"], "memory_model": ["adam_mixed", "none"],
    "price_profile": ["business", "flat"], "hardware.mfu": ["1", "1e-9"],
    "hardware.seq_len": ["1", "65536"], "hardware.gpu_tflops": ["1e-3", "1000000"],
    "hardware.micro_batch_size": ["1", "2"], "hardware.gpu_mem_gb": ["1", "80"],
    "hardware": ["{}", "{mfu:0.5}"],
}


def _override(key: str, value: str, prefix: str) -> str:
    return f"~{key}" if prefix == "~" else f"{prefix}{key}={value}"


def overrides(odd, odd_percent: int, max_size: int = 4) -> st.SearchStrategy[list[str]]:
    """1..max_size overrides; a value is odd (from ``odd``) in about ``odd_percent`` % of them,
    else valid for its key (:data:`GOOD`)."""
    def one(key):
        good = st.sampled_from(GOOD.get(key, ["1"]))
        value = st.integers(0, 99).flatmap(lambda i: odd if i < odd_percent else good)
        return st.builds(_override, st.just(key), value,
                         st.sampled_from([""] * 9 + ["+", "++", "~"]))

    return st.lists(st.sampled_from(KEYS).flatmap(one), min_size=1, max_size=max_size)


ANY_VALUE = st.one_of(st.sampled_from(WORDS), st.integers(-3, 10**13).map(str),
                      st.floats(allow_nan=True, allow_infinity=True).map(repr),
                      st.text(max_size=6))
# Only values that are either invalid or cheap: the whole command runs on them.
CHEAP_VALUE = st.one_of(st.sampled_from([w for w in WORDS if w != "100000"]),
                        st.sampled_from(SMALL_INTS).map(str))


def _one_line(message: str) -> None:
    assert message and "\n" not in message.strip(), message
    assert "Traceback" not in message and "numba" not in message.lower(), message


def _precheck_compose_validate(args: list[str]) -> str | None:
    """None when the command line is valid (within bounds); else the one line the command
    prints (without the ``bacepipe.sweep:`` prefix)."""
    try:
        app.precheck(args)
    except InputError as err:
        return str(err)
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            cfg = compose("config", overrides=args)
    except (HydraException, OmegaConfBaseException) as err:
        return app._first_line(err)
    try:
        s = validate_config(cfg)
    except InputError as err:
        assert err.field, err  # names the field
        return str(err)
    # Valid: then it is within the bounds that keep a run finite in time and memory.
    assert 1 <= s.topologies <= 10**8 and -(-s.topologies // s.chunk_size) <= MAX_CHUNKS
    assert 1 <= s.num_jobs <= 100_000 and 1 <= s.num_regions <= 1000 and s.workers <= 1024
    if s.scenario == "random":
        assert chunk_bytes(min(s.chunk_size, s.topologies), len(s.schedulers), s.num_jobs,
                           s.num_regions, s.save_jobs) <= MAX_CHUNK_BYTES
    return None


@pytest.mark.breadth
@settings(max_examples=examples(200), deadline=None)
@given(args=overrides(ANY_VALUE, odd_percent=40))
def test_overrides_validate_or_fail_in_one_line(args):
    message = _precheck_compose_validate(args)
    if message is not None:
        _one_line(message)


@pytest.mark.breadth
@settings(max_examples=examples(200), deadline=None)
@given(values=st.dictionaries(st.sampled_from([*SETTINGS, "surprise"]), st.one_of(
    st.none(), st.booleans(), st.integers(-3, 10**13), st.floats(allow_nan=True),
    st.sampled_from([1e308, -1e308, 2**63, 10**12, 10**6]), st.text(max_size=5),
    st.lists(st.sampled_from(["lcf", "ldf", "bace_pipe", "x", 1]), max_size=3),
    st.dictionaries(st.sampled_from(["mfu", "seq_len", "x"]), st.floats(allow_nan=True),
                    max_size=2)), max_size=5))
def test_python_config_validates_or_names_the_field(values):
    """``validate`` on a plain mapping (the Python API): the same rules, the same one line."""
    try:
        s = validate_config(values)
    except InputError as err:
        assert err.field
        _one_line(str(err))
    else:
        assert s.topologies <= 10**8 and s.num_regions <= 1000 and s.num_jobs <= 100_000


@pytest.mark.parametrize("args, message", [
    (["topologies=1000000000000"], "topologies: must be <= 1e+08, got 1000000000000"),
    (["num_regions=1000000"], "num_regions: must be <= 1000, got 1000000"),
    (["num_jobs=100000", "num_regions=1000", "topologies=10"],
     "num_jobs: a chunk of 10 topologies × 100000 jobs × 1000 regions needs about"),
    (["topologies=100000000", "chunk_size=1"],
     "chunk_size: 100000000 topologies in chunks of 1 make 100000000 files"),
    (["schedulers=[]"], "schedulers: no scheduler given"),
    (["schedulers=[lcf,[x]]"], "schedulers: unknown scheduler ['x']"),
    (["hardware.mfu=nan"], "hardware.mfu: must be finite, got nan"),
    (["gpu_scale=1e308"], "gpu_scale: must be <= 1000, got 1e+308"),
    (["arrivals=poisson", "arrival_rate_per_h=1e-308"], "arrival_rate_per_h: must be >= 0.001"),
    (["topologies=[1,2"], "topologies: cannot parse 'topologies=[1,2'"),
    (["results_dir=${oops}"], "results_dir: Interpolation key 'oops' not found"),
    (["=3"], "=3: no key before '='"),
])
def test_known_bad_lines(args, message):
    assert _precheck_compose_validate(args).startswith(message)


@pytest.mark.breadth
@settings(max_examples=examples(40), deadline=None, suppress_health_check=FIXTURES_OK)
@given(args=overrides(CHEAP_VALUE, odd_percent=15, max_size=3), multirun=st.booleans())
def test_whole_command_in_process_ends_cleanly(args, multirun, tmp_path, capsys, monkeypatch):
    """``app.main`` end to end: exit 0 with nothing on stderr, or 2 with one line."""
    monkeypatch.chdir(tmp_path)  # Hydra's outputs/
    argv = [*(["-m"] if multirun else []), *args, "topologies=2", "workers=1", "backend=loky",
            "progress=false", f"results_dir={tmp_path / 'res'}"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            code = app.main(argv)
        except SystemExit as stop:
            code = stop.code
    err = capsys.readouterr().err
    assert code in (0, 2), (argv, err)
    if code == 2:
        assert err.startswith(PROG) and err.count("\n") == 1, (argv, err)
        _one_line(err)
    else:
        assert err == "", (argv, err)
    assert not [w for w in caught if issubclass(w.category, (RuntimeWarning, UserWarning))], \
        [str(w.message) for w in caught]


@pytest.mark.parametrize("args, message", [
    (["topologies=1000000000000"], "topologies: must be <= 1e+08"),
    (["num_jobs=100000", "num_regions=1000"], "num_jobs: a chunk of 500 topologies"),
    (["-m", "num_regions=6,1000000"], "num_regions: must be <= 1000, got 1000000"),
])
def test_command_line_refuses_huge_counts_in_one_line(tmp_path, args, message):
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    proc = subprocess.run([sys.executable, "-m", "bacepipe.sweep", *args,
                           f"results_dir={tmp_path / 'res'}"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(PROG + message) and proc.stderr.count("\n") == 1, proc.stderr
    assert not (tmp_path / "res").exists()  # refused, not attempted
