#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
"""Statistics stay bounded on disk and exact, however many processes come
and go (provider/core/stats_file.h).

N short-lived `openssl enc` processes, P at a time, load aesmux through
openssl.cnf with stats_file set, each encrypting the same buffer; while
they run, `aesmux stats --json` reads the directory over and over (and
folds, as writers do). Checks:
  - every reading is exact for when it ran: its requests lie between what
    the processes reaped before it began served and what those started
    before it ended could have, and count whole processes;
  - the directory never holds more than LIMIT files (2P + 4) and those of
    the processes that exited while readings held the lock (no fold runs
    then);
  - at the end the totals are exactly N processes' (processes, requests,
    bytes), and once `aesmux stats` has run the directory holds the
    summary and the lock alone;
  - no process printed anything (no statistics problem).

usage: stats_bound_test.py BUILD_DIR [--processes N] [--parallel P]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--processes", type=int, default=1000)
    parser.add_argument("--parallel", type=int, default=4)
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    aesmux = os.path.join(build, "provider", "aesmux")
    openssl = shutil.which("openssl")
    work = tempfile.mkdtemp(prefix="aesmux-stats-bound-")
    try:
        return run(args, aesmux, openssl, build, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def write_cnf(path, build, stats_file):
    with open(path, "w") as cnf:
        cnf.write(
            "openssl_conf = init\n[init]\nproviders = providers\n"
            "alg_section = evp\n[evp]\ndefault_properties = ?provider=aesmux\n"
            "[providers]\ndefault = default_sect\naesmux = aesmux_sect\n"
            "[default_sect]\nactivate = 1\n[aesmux_sect]\n"
            f"module = {build}/provider/aesmux.so\nactivate = 1\n"
            f"stats_file = {stats_file}\n")


def read_stats(aesmux, prefix):
    """(processes, requests, bytes) of AES-128-CBC by `aesmux stats`."""
    result = subprocess.run([aesmux, "stats", "--json", prefix],
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"aesmux stats: exit {result.returncode}: "
                           f"{result.stderr.strip()}")
    data = json.loads(result.stdout)
    requests = sum(p["requests"] for p in data["paths"]
                   if p["algorithm"] == "AES-128-CBC")
    size = sum(p["bytes"] for p in data["paths"]
               if p["algorithm"] == "AES-128-CBC")
    return data["processes"], requests, size


def run(args, aesmux, openssl, build, work):
    payload = os.path.join(work, "payload")
    with open(payload, "wb") as f:
        f.write(bytes(4096))
    argv = [openssl, "enc", "-aes-128-cbc", "-nopad",
            "-K", "000102030405060708090a0b0c0d0e0f",
            "-iv", "000102030405060708090a0b0c0d0e0f",
            "-in", payload, "-out", "/dev/null"]
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith("AESMUX_")}

    # What one process serves.
    os.mkdir(os.path.join(work, "one"))
    write_cnf(os.path.join(work, "one.cnf"), build, f"{work}/one/s")
    subprocess.run(argv, env=dict(environ, OPENSSL_CONF=f"{work}/one.cnf"),
                   check=True)
    one_processes, per_requests, per_bytes = read_stats(aesmux, f"{work}/one/s")
    if one_processes != 1 or per_requests == 0:
        print(f"FAIL: one process: {one_processes} processes, "
              f"{per_requests} requests")
        return 1

    stats_dir = os.path.join(work, "stats")
    os.mkdir(stats_dir)
    os.chmod(stats_dir, 0o1777)
    prefix = f"{stats_dir}/s"
    write_cnf(os.path.join(work, "run.cnf"), build, prefix)
    env = dict(environ, OPENSSL_CONF=f"{work}/run.cnf")
    errors = os.open(os.path.join(work, "stderr"),
                     os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    devnull = os.open(os.devnull, os.O_RDWR)
    actions = [(os.POSIX_SPAWN_DUP2, devnull, 0),
               (os.POSIX_SPAWN_DUP2, devnull, 1),
               (os.POSIX_SPAWN_DUP2, errors, 2)]

    lock = threading.Lock()
    counts = {"started": 0, "reaped": 0}
    done = threading.Event()
    failures = []
    readings = []
    max_files = [0]
    # A file per process running (or exited and not yet reaped) and one
    # being written by each, the summary, its temporary file, the lock,
    # and the file of the process whose exit made the last fold.
    limit = 2 * args.parallel + 4
    # While some reading holds the user's lock (readings overlapping one
    # another hold it throughout), no fold runs: the files of processes
    # that exit meanwhile stay until the next fold, and count on top.
    hold = {"readings": 0, "since": 0}
    held_over = [0]

    def sample_files():
        with lock:
            exited = counts["reaped"] - hold["since"]
        files = len(os.listdir(stats_dir))
        max_files[0] = max(max_files[0], files)
        held_over[0] = max(held_over[0], exited)
        if files > limit + exited:
            failures.append(
                f"{files} files in the directory, more than {limit} and the "
                f"{exited} processes that exited while readings held the lock")

    def reader():
        while not done.is_set():
            with lock:
                low = counts["reaped"]
                if hold["readings"] == 0:
                    hold["since"] = low
                hold["readings"] += 1
            try:
                processes, requests, size = read_stats(aesmux, prefix)
            except (RuntimeError, OSError, ValueError) as e:
                if low > 0 or "no statistics files" not in str(e):
                    failures.append(str(e))
                continue
            finally:
                sample_files()
                with lock:
                    hold["readings"] -= 1
            with lock:
                high = counts["started"]
            readings.append((low, processes, high))
            time.sleep(0.01)  # leave the CPUs to the writers mostly
            if not (low <= processes <= high and
                    requests == processes * per_requests and
                    size == processes * per_bytes):
                failures.append(
                    f"a reading of {processes} processes, {requests} requests, "
                    f"{size} bytes, with {low} processes reaped before it and "
                    f"{high} started after it (one process: {per_requests} "
                    f"requests, {per_bytes} bytes)")

    start = time.monotonic()
    threads = [threading.Thread(target=reader) for _ in range(2)]
    for thread in threads:
        thread.start()
    running = set()
    while counts["reaped"] < args.processes:
        while len(running) < args.parallel and counts["started"] < args.processes:
            with lock:
                counts["started"] += 1
            running.add(os.posix_spawn(openssl, argv, env, file_actions=actions))
        reaped = False
        for pid in list(running):
            waited, status = os.waitpid(pid, os.WNOHANG)
            if waited == 0:
                continue
            running.discard(pid)
            reaped = True
            if os.waitstatus_to_exitcode(status) != 0:
                failures.append(f"openssl enc exited with {status}")
            with lock:
                counts["reaped"] += 1
        if not reaped:
            time.sleep(0.001)
    done.set()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - start

    before = len(os.listdir(stats_dir))
    max_files[0] = max(max_files[0], before)
    processes, requests, size = read_stats(aesmux, prefix)
    after = sorted(os.listdir(stats_dir))
    expected = (args.processes, args.processes * per_requests,
                args.processes * per_bytes)
    if (processes, requests, size) != expected:
        failures.append(f"totals {processes} processes, {requests} requests, "
                        f"{size} bytes; expected {expected}")
    if after != [f"s.lock.{os.geteuid()}", f"s.summary.{os.geteuid()}"]:
        failures.append(f"after aesmux stats the directory holds {after}")
    printed = open(os.path.join(work, "stderr")).read()
    if printed:
        failures.append(f"the processes printed: {printed[:500]}")

    print(f"{args.processes} processes ({args.parallel} at a time) in "
          f"{elapsed:.0f} s, {len(readings)} readings meanwhile; at most "
          f"{max_files[0]} files in the directory (limit {limit}, and up to "
          f"{held_over[0]} exited while readings held the lock), "
          f"{before} when the last had exited, 2 after aesmux stats; totals "
          f"{processes} processes, {requests} requests, {size} bytes")
    for failure in failures[:10]:
        print(f"FAIL: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
