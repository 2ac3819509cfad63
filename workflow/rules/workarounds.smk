# What works around Snakemake's own behaviour, each with the upstream issue it works around (or the search that
# found none) and the condition for removing it. The rules call none of it directly: common.smk and rates.smk
# read scans through the first three; the rest runs once, as the Snakefile is parsed or the run ends.
import threading
from contextlib import contextmanager

from depthwidth.plan.validate import cost_note
from snakemake.exceptions import IncompleteCheckpointException


# 1. An exception in an input function becomes Snakemake's InputFunctionException: a traceback of the
#    workflow's own lines around one sentence. A damaged file the workflow reads (a round of a scan) is one line
#    naming it, as every bad input is. Upstream: none asks for it (the nearest, snakemake/snakemake#295, asks
#    the message to name the function). Remove when Snakemake prints an input function's error as one line.
@contextmanager
def no_traceback(*errors):
    try:
        yield
    except errors as err:
        sys.exit(f"depthwidth: {err}")


# 2. IncompleteCheckpointException names one checkpoint output, so a workflow that waits on several scans'
#    rounds would run them one scan after another; ScansIncomplete names every round waited for, so the scans
#    of all shapes run side by side. A params function may wait on one of its inputs only (one_round_named).
#    Upstream: snakemake/snakemake#439 (open: checkpoints evaluated one at a time), whose pull request #4125
#    adds `with checkpoints:` for it. Remove when the pinned Snakemake has that block.
class ScansIncomplete(IncompleteCheckpointException):
    """Every scan round an input function is waiting for at once."""


def each_scan(scan_ids, read):
    """read(scan id) for every scan, in order; ScansIncomplete naming every round still to run."""
    found, waiting = [], []
    for scan_id in scan_ids:
        try:
            found.append(read(scan_id))
        except IncompleteCheckpointException as err:
            waiting.append(err.targetfile)
    if waiting:
        raise ScansIncomplete(checkpoints.rate_scan.rule, waiting)
    return found


@contextmanager
def one_round_named():
    try:
        yield
    except ScansIncomplete as err:
        raise IncompleteCheckpointException(err.rule, err.targetfile[0]) from None


# 3. `--delete-all-output` deletes every output of this config's DAG: the corpus, runs and simulations other
#    configs share with it too (Snakemake knows one config's DAG, never another's); afterwards `check` of a config
#    that shares them found 57 of its 109 artifacts missing. Refused in one line that points to `clean`, which
#    keeps what another config plans. Write-protecting shared outputs (protected(), which the deletion skips)
#    would make every rerun after a code change fail on them. Upstream: none found (snakemake/snakemake#3079 is
#    about what the flag leaves, not what it shares); the flag is read off sys.argv, as Snakemake gives a
#    Snakefile no other sight of it. Remove when Snakemake can keep a rule's outputs from deletion alone.
def deletes_all_output(argv):
    # argparse takes any unambiguous prefix of an option: --delete-a is one already
    return any(
        arg.startswith("--delete-a") and "--delete-all-output".startswith(arg)
        for arg in argv
    )


if workflow.is_main_process and deletes_all_output(sys.argv[1:]):
    sys.exit(
        "depthwidth: --delete-all-output would delete the corpus, runs and simulations other configs share with "
        f"{NAME}; `python -m depthwidth clean --configfile FILE` deletes what this config alone built"
    )


# 4. A lock left in .snakemake/locks: Snakemake refuses to run and advises `--unlock`, right only when nothing
#    still writes here. Says which case this is: a snakemake process still runs in this folder, or the jobs of
#    a killed one do (`kill -9` leaves its jobs training), or neither (a stale lock). Upstream: none found
#    (searched snakemake/snakemake for LockException and --unlock while another process runs). Remove when
#    Snakemake's LockException says whether the lock's owner still runs.
READ_ONLY_COMMANDS = {
    "check",
    "plan",
    "validate-config",
    "rate-scans",
    "bench",
    "clean",
}


def processes_here():
    """(snakemake pids, depthwidth job pids) of this machine's processes whose working directory is this one,
    from /proc (none where there is none): snakemake itself, and the commands its jobs run.
    """
    here, found = os.getcwd(), ([], [])
    for proc in Path(os.sep, "proc").glob(
        "[0-9]*"
    ):  # the process table, not a data path
        try:
            argv = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")
            cwd = os.readlink(proc / "cwd")
        except OSError:  # gone, or another user's
            continue
        program = [Path(arg).name for arg in argv[:3]]
        if int(proc.name) == os.getpid() or cwd != here:
            continue
        if (
            program[:1] == ["snakemake"]
            or "snakemake" in program[1:2]
            or argv[1:3] == ["-m", "snakemake"]
        ):
            found[0].append(int(proc.name))
        elif (
            argv[1:3] == ["-m", "depthwidth"]
            and argv[3:4]
            and argv[3] not in READ_ONLY_COMMANDS
        ):
            found[1].append(int(proc.name))
    return sorted(found[0]), sorted(found[1])


def lock_note():
    """One line when snakemake's lock folder holds a lock as this run starts; None otherwise."""
    if not any(Path(".snakemake", "locks").glob("*.lock")):
        return None
    snakemakes, jobs = processes_here()
    lock = "depthwidth: .snakemake/locks holds a lock"
    if snakemakes:
        return (
            f"{lock} of snakemake process {', '.join(map(str, snakemakes))}, running in this folder: if this run "
            "cannot lock the directory, wait for that one (or stop it) rather than `snakemake --unlock`, which "
            "would let both write the same files"
        )
    if jobs:
        return (
            f"{lock} and no snakemake process runs in this folder, but the jobs of a killed one still do "
            f"(python -m depthwidth, process {', '.join(map(str, jobs))}): wait for them to end (or stop them) "
            "before `snakemake --unlock`, or two processes will write the same files"
        )
    return (
        f"{lock} and no snakemake process runs in this folder on this machine: a killed run left it; if this "
        "run cannot lock the directory, `snakemake --unlock` removes it (check first that no run on another "
        "machine shares this folder)"
    )


if workflow.is_main_process and (note := lock_note()):
    print(note, file=sys.stderr)


# 5. `snakemake --report FILE` writes the report in place, and one that fails (a figure not built yet) leaves
#    the old report looking current: it goes first, so a failed --report leaves none. Only a report Snakemake
#    wrote goes (an .html titled "Snakemake Report", or a .zip holding a report.html): `--report README.md`
#    deleted the README before Snakemake refused the name. The file is read off sys.argv (no API gives it to
#    a Snakefile). Upstream: none found (searched for a failed --report leaving the old one). Remove when
#    Snakemake writes its report to a temporary file and renames it only once it is complete.
def report_requested(argv):
    """The file `snakemake --report [FILE]` was asked to write, if it was."""
    for i, arg in enumerate(argv):
        if arg.startswith("--report="):
            return arg.partition("=")[2]
        if arg == "--report":
            given = argv[i + 1] if i + 1 < len(argv) else ""
            return given if given and not given.startswith("-") else "report.html"
    return None


def snakemake_report(path):
    """Whether the file at `path` is a report Snakemake wrote (by its suffix and content)."""
    import zipfile

    path = Path(path)
    if path.suffix == ".zip" and zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as opened:
            return any(Path(name).name == "report.html" for name in opened.namelist())
    if path.suffix == ".html":
        with open(path, "rb") as head:
            return b"<title>Snakemake Report</title>" in head.read(4096)
    return False


OLD_REPORT = report_requested(sys.argv[1:]) if workflow.is_main_process else None
if OLD_REPORT and Path(OLD_REPORT).is_file() and snakemake_report(OLD_REPORT):
    Path(OLD_REPORT).unlink()
    print(
        f"depthwidth: removed the old {OLD_REPORT}; a failed report leaves none",
        file=sys.stderr,
    )


# 6. Snakemake builds the DAG of every job before the first runs, in time that grows with the number of runs
#    (18,006 runs of ci with 1000 seeds: more than 300 s of `snakemake -n` with no word): what a large config
#    costs is said first, in one line. Upstream: snakemake/snakemake#2354 (a very slow large workflow). Remove
#    when Snakemake builds a DAG of 20,000 jobs in seconds.
if workflow.is_main_process and (note := cost_note(PLAN)):
    print(f"depthwidth: {note}", file=sys.stderr)


# 7. Snakemake's scheduler arms a timer on every pass of its loop (max-jobs-per-timespan, a minute in
#    profiles/default) and, as they are not daemon threads, the process waits for the last of them before it
#    exits: called on success and on error, it ends them. Upstream: none found (searched for snakemake exiting
#    late after the last job). Remove when snakemake exits at once after its last job with profiles/default.
def stop_scheduler_timers():
    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer):
            thread.cancel()

# 8. (In the package, named here to keep the list whole.) Snakemake locks the outputs of the jobs it plans as it
#    starts, not those of the jobs a checkpoint adds later, so two workflows that share a scan could train one
#    of its runs at once: the train command holds a lock of its own per run (depthwidth/runlock.py). Upstream:
#    none found (searched for outputs of jobs added by a checkpoint left unlocked). Remove when Snakemake locks
#    the outputs of the jobs a checkpoint adds.
