import sys

from depthwidth import numerics

try:  # before torch or numpy loads: the kernels every job runs (numerics.py)
    numerics.pin(sys.argv[1:])
except ValueError as err:
    raise SystemExit(f"depthwidth: error: {err}") from None

from depthwidth.cli import main  # noqa: E402 - after the pin, which must precede torch's and numpy's loading

raise SystemExit(main())
