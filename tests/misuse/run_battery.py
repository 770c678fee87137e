#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Runs the misuse battery: every case as its own MPI job under a watchdog.

A case passes when every rank raised the same haloshift::error naming the
argument and its value (the program judges that, see main.cpp). A job that
outlives --timeout is killed and counts as a hang; a crash, a sanitizer
report (also one that does not abort) or any other exit is a failure.

Usage: run_battery.py --program P --ranks N [--jobs J] [--timeout S] [--subset mpich]
                      [--launch 'mpiexec -n {n} --oversubscribe'] [--only NAME...]
"""
import argparse
import concurrent.futures
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time

SANITIZER_MARKS = ("ERROR: AddressSanitizer", "runtime error:", "ERROR: LeakSanitizer", "WARNING: AddressSanitizer")


def run_one(launch, program, ranks, name, timeout):
    command = [part.replace("{n}", str(ranks)) for part in launch] + [program, "--case", name]
    started = time.monotonic()
    # Each job its own Open MPI session directory: jobs started at once raced to create the shared
    # /tmp/ompi.<host>.<uid> ("mkdir ... File exists", orte_init failed) in a sanitizer run of CI.
    # TMPDIR too: the files a case writes (calibrations) go with the directory.
    with tempfile.TemporaryDirectory(prefix="haloshift-misuse-", ignore_cleanup_errors=True) as session:
        env = dict(os.environ, OMPI_MCA_orte_tmpdir_base=session, TMPDIR=session)
        job = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                               start_new_session=True)  # its own process group: the watchdog kills every rank
        try:
            output, _ = job.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(job.pid, signal.SIGKILL)
            output, _ = job.communicate()
            return name, "HANG", time.monotonic() - started, output
    seconds = time.monotonic() - started
    if any(mark in output for mark in SANITIZER_MARKS):
        return name, "FAIL", seconds, output
    if job.returncode == 0:
        return name, "PASS", seconds, output
    if job.returncode == 77:
        return name, "SKIP", seconds, output
    return name, "FAIL", seconds, output + f"\n(exit status {job.returncode})"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--program", required=True)
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=60)
    # The reduced sweep (scripts/test under MPICH, which busy-polls when oversubscribed) runs the cases marked for it.
    reduced = os.environ.get("HALOSHIFT_TEST_SWEEP") == "reduced"
    parser.add_argument("--subset", choices=["all", "mpich"], default="mpich" if reduced else "all")
    parser.add_argument("--launch", default="mpiexec -n {n}")
    parser.add_argument("--only", nargs="*", default=[])
    args = parser.parse_args()

    listing = subprocess.run([args.program, "--list"] + (["--mpich"] if args.subset == "mpich" else []),
                             check=True, capture_output=True, text=True).stdout.split("\n")
    cases = [line.split() for line in listing if line.strip()]
    names = [name for name, fewest in cases if int(fewest) <= args.ranks]  # the others need more ranks: skipped
    skipped = len(cases) - len(names)
    if args.only:
        names = [n for n in names if n in args.only]
    launch = shlex.split(args.launch)
    counts = {"PASS": 0, "SKIP": skipped, "FAIL": 0, "HANG": 0}
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_one, launch, args.program, args.ranks, n, args.timeout) for n in names]
        for future in futures:  # in registration order, so the log reads like the list
            name, verdict, seconds, output = future.result()
            counts[verdict] += 1
            if verdict in ("FAIL", "HANG"):
                print(f"{verdict} {name} ({seconds:.1f} s)\n{output.rstrip()}\n", flush=True)
    print(f"misuse battery at {args.ranks} rank(s): {len(names) + skipped} cases, {counts['PASS']} passed, "
          f"{counts['SKIP']} skipped (need more ranks), {counts['FAIL']} failed, {counts['HANG']} hung "
          f"({time.monotonic() - started:.0f} s)")
    return 0 if counts["FAIL"] == 0 and counts["HANG"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
