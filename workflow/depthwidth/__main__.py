import os
import sys

from depthwidth import numerics


def console() -> int:
    """`python -m depthwidth` and the `depthwidth` script alike: the numeric pin, then the command."""
    try:  # before torch or numpy loads: the kernels every job runs (numerics.py)
        numerics.pin(sys.argv[1:])
    except ValueError as err:
        print(f"depthwidth: error: {err}", file=sys.stderr)
        return 1
    from depthwidth.cli import main  # after the pin, which must precede torch's and numpy's loading

    try:
        code = main()
        sys.stdout.flush()  # a closed pipe shows here, not at exit where it could not be caught
    except BrokenPipeError:
        # the reader stopped early (`depthwidth --help | head`): no traceback; Python's documented recipe
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return code


if __name__ == "__main__":
    raise SystemExit(console())
