"""What writing the core's outputs costs on this machine when their memory pages are fresh, per
simulation of the paper setting (6 regions, 8 jobs, eight schedulers): the arrays
``simulate_batch`` fills for T topologies are allocated and written once, at once again (the
pages just freed are reused), and again after each pause. A virtual machine whose balloon device
reports freed pages to its host (virtio-balloon free page reporting) hands a process pages the
host must fault in again once they were freed long enough ago to be reported.

    python benchmarks/fresh_pages.py [--topologies 20000] [--pauses 0.5,2,5]
"""

import argparse
import time
from pathlib import Path

from _common import header, table, usage

from bacepipe.core.batch import empty_outputs, path_width
from bacepipe.model.generate import generate_batch
from bacepipe.policies import PAPER_SCHEDULERS

#: The bit of a virtio balloon's features that says it reports free pages to the host
#: (VIRTIO_BALLOON_F_REPORTING).
REPORTING_BIT = 5


def page_reporting() -> str:
    """'on' or 'off' for a virtio balloon on this machine, else 'no balloon' (Linux sysfs)."""
    for device in Path("/sys/bus/virtio/devices").glob("*"):
        driver = device / "driver"
        if driver.exists() and driver.resolve().name == "virtio_balloon":
            features = (device / "features").read_text().strip()
            return "on" if features[REPORTING_BIT:REPORTING_BIT + 1] == "1" else "off"
    return "no balloon"


def _write(shape: tuple, simulations: int, when: str) -> dict:
    """Allocate the outputs of ``shape`` (empty_outputs' arguments) and write every element."""
    with usage() as used:
        for array in empty_outputs(*shape):
            array.fill(1)
    wall, _, system = used()
    return {"when": when, "seconds": wall, "us_per_sim": 1e6 * wall / simulations,
            "sys_us_per_sim": 1e6 * system / simulations}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--topologies", type=int, default=20_000)
    p.add_argument("--pauses", default="0.5,2,5", help="seconds, with commas")
    args = p.parse_args()
    if args.topologies < 1:
        p.error("--topologies: must be at least 1")
    try:
        pauses = [float(x) for x in args.pauses.split(",") if x]
    except ValueError:
        p.error(f"--pauses: not seconds with commas: {args.pauses!r}")
    batch = generate_batch("random", 0, range(args.topologies))
    shape = (args.topologies, len(PAPER_SCHEDULERS), batch.params_b.shape[1],
             path_width(batch.gpus.shape[1], batch.layers))
    simulations = args.topologies * len(PAPER_SCHEDULERS)
    megabytes = sum(a.nbytes for a in empty_outputs(*shape)) / 1e6
    header(f"fresh pages: writing the outputs of {simulations:,} simulations ({megabytes:,.0f} MB);"
           f" balloon page reporting: {page_reporting()}")
    rows = [_write(shape, simulations, "first"), _write(shape, simulations, "at once again")]
    for pause in pauses:
        time.sleep(pause)
        rows.append(_write(shape, simulations, f"after {pause:g} s"))
    table(rows)


if __name__ == "__main__":
    main()
