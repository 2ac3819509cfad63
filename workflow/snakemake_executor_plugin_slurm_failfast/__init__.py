"""Snakemake's SLURM executor, ending the run when its status queries keep failing.

`executor: slurm-failfast` is snakemake-executor-plugin-slurm with one fix. The plugin (2.8)
drops its active jobs from a status check in which every query fails (no slurmctld, no
accounting database behind sacct), and snakemake then waits forever for jobs nobody watches.
Here those jobs stay active, and after `status_attempts` such checks in a row (the plugin's own
setting and its documented meaning: "attempts ... before giving up") the run ends with a one-line
WorkflowError, its unwatched jobs cancelled. One setting is added: `max_seconds_between_status_checks`
caps the interval between status checks (the plugin grows it by 10 s per check without a finished
job, to 180 s). Every setting of the slurm executor is taken, under this executor's prefix:
`--slurm-failfast-status-command squeue`, `slurm-failfast-status-command: squeue` in a profile.
"""

from dataclasses import dataclass, field
from typing import Optional

from snakemake_executor_plugin_slurm import Executor as SlurmExecutor
from snakemake_executor_plugin_slurm import ExecutorSettings as SlurmExecutorSettings
from snakemake_executor_plugin_slurm import common_settings
from snakemake_interface_common.exceptions import WorkflowError

__all__ = ["Executor", "ExecutorSettings", "common_settings"]


@dataclass
class ExecutorSettings(SlurmExecutorSettings):
    max_seconds_between_status_checks: Optional[int] = field(  # noqa: UP045 (the plugin interface reads Optional)
        default=None,
        metadata={
            "help": "Cap on the seconds between two status checks, which the slurm executor grows by 10 "
            "after every check in which no job finished (up to 180). Default: no cap.",
        },
    )


class Executor(SlurmExecutor):
    def __init__(self, workflow, logger):
        # before super().__init__ starts the thread that checks the jobs
        self.failed_checks = 0  # status checks in a row in which no active job got a status
        self._reported: set[int] = set()  # ids of the jobs reported done in the current check
        super().__init__(workflow, logger)

    async def check_active_jobs(self, active_jobs):
        self._reported.clear()
        kept = []
        async for job in super().check_active_jobs(active_jobs):
            kept.append(job)
            yield job
        cap = self.workflow.executor_settings.max_seconds_between_status_checks
        if cap is not None:
            self.next_seconds_between_status_checks = min(self.next_seconds_between_status_checks, cap)
        seen = {id(job) for job in kept} | self._reported
        lost = [job for job in active_jobs if id(job) not in seen]  # neither running nor done: no status
        if not lost:
            self.failed_checks = 0
            return
        self.failed_checks += 1
        attempts = self.workflow.executor_settings.status_attempts
        if self.failed_checks >= attempts:
            try:  # nobody would watch them any more
                self.cancel_jobs(lost)
                cancelled = "cancelled"
            except WorkflowError as e:
                cancelled = f"not cancelled: {e}"
            raise WorkflowError(
                f"SLURM status query ('{self.get_status_command()}') failed in {self.failed_checks} checks "
                f"in a row (status_attempts={attempts}); giving up, {len(lost)} job(s) {cancelled}"
            )
        for job in lost:
            yield job

    def report_job_success(self, job_info):
        self._reported.add(id(job_info))
        super().report_job_success(job_info)

    def report_job_error(self, job_info, msg=None, **kwargs):
        self._reported.add(id(job_info))
        super().report_job_error(job_info, msg=msg, **kwargs)
