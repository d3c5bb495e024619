#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
"""OpenSSL's own test programs, from one OpenSSL source tree built by
scripts/openssl-build.sh, run with the default provider alone and with
aesmux: the results must be the same.

  evp_test   each evpciph_aes*.txt of the tree with the default provider
             alone and with aesmux preferred (default_properties =
             ?provider=aesmux): the same counts of tests, errors (none) and
             skipped stanzas; its stanzas of the algorithms aesmux serves
             (a copy of the file without the others) with the default
             provider alone and with aesmux required (evp_test's -propquery
             provider=aesmux, which leaves its random generator on the
             default provider): the same again;
  ssl_test   each test/ssl-tests/*.cnf (but those OpenSSL's recipe skips
             in this build), both ways the recipe runs it ("none": the
             default library context, configured by OPENSSL_CONF;
             "default": a library context of its own), aesmux preferred;
  sslapitest with the library context's configuration file naming aesmux
             next to the default provider, aesmux preferred;
  recordlentest  through OPENSSL_CONF, aesmux preferred.

Every test and subtest must end the same way (ok, not ok, skipped) as with
the default provider alone, and aesmux's statistics must show it served
requests in every program that uses AES (a run that did not load aesmux
cannot pass for parity). Exits non-zero on any difference.
"""
import argparse
import collections
import concurrent.futures
import os
import pathlib
import re
import subprocess
import sys
import time

# ssl-tests configurations OpenSSL's recipe (80-test_ssl_new.t) skips when
# a feature is disabled, for the features this tree may be built without.
SSL_TEST_NEEDS = {
    "22-compression.cnf": ["zlib"],
    "29-dtls-sctp-label-bug.cnf": ["sctp", "sock"],
    "32-compressed-certificate.cnf": ["comp"],
}
# One line of OpenSSL's TAP output: "ok 3 - name", "not ok 1 - name # skipped".
TAP_LINE = re.compile(r"^(\s*)(not ok|ok) (\d+) - (.*?)(\s+# skipped.*)?$")
COMPLETED = re.compile(r"Completed (\d+) tests with (\d+) errors and (\d+) skipped")


class Run:
    """One program run: its command, environment, output and status."""

    def __init__(self, name, argv, env, cwd, stats=None):
        self.name, self.argv, self.env, self.cwd = name, argv, env, cwd
        self.stats = stats  # aesmux's statistics file prefix, if any
        self.status, self.output, self.seconds = None, "", 0.0

    def __call__(self):
        start = time.monotonic()
        proc = subprocess.run(self.argv, env=self.env, cwd=self.cwd,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, errors="replace", timeout=1800)
        self.status, self.output = proc.returncode, proc.stdout
        self.seconds = time.monotonic() - start
        return self

    def tap(self):
        """The results of its tests and subtests, in order."""
        results = []
        for line in self.output.splitlines():
            m = TAP_LINE.match(line)
            if m:
                verdict = "skipped" if m.group(5) else m.group(2)
                results.append((len(m.group(1)), m.group(3), m.group(4), verdict))
        return results


def served(prefix):
    """aesmux's statistics summed over every process of one run:
    {algorithm: requests}; None if no process wrote any."""
    files = list(prefix.parent.glob(prefix.name + ".*"))
    if not files:
        return None
    counts = collections.Counter()
    for f in files:
        for line in f.read_text().splitlines():
            fields = line.split()
            # "<ALGORITHM> <path> <requests> <bytes>": a request counted
            # on a path (simd, fallback, afalg, mb); other lines say other
            # things (hand-offs, key set-ups, batches).
            if len(fields) == 4 and fields[1] in ("simd", "fallback", "afalg", "mb"):
                counts[fields[0]] += int(fields[2])
    return counts


class Suites:
    def __init__(self, args):
        self.src = pathlib.Path(args.openssl).resolve()
        self.module = pathlib.Path(args.module).resolve()
        self.work = pathlib.Path(args.work).resolve()
        self.work.mkdir(parents=True, exist_ok=True)
        (self.work / "stats").mkdir(exist_ok=True)
        for old in (self.work / "stats").iterdir():
            old.unlink()
        self.failures = []
        self.env = dict(os.environ)
        for key in [k for k in self.env if k.startswith("AESMUX_") or
                    k.startswith("OPENSSL_")]:
            del self.env[key]
        # The tree's own libraries for every program and for aesmux.so:
        # sslapitest links libcrypto statically, and the module then loads
        # the shared one beside it.
        self.env["LD_LIBRARY_PATH"] = str(self.src.parent / "prefix" / "lib")
        self.env["OPENSSL_CONF"] = "/dev/null"
        # As OpenSSL's test harness (test/run_tests.pl) sets it: sslapitest
        # loads the tree's test ENGINE dasync.
        self.env["OPENSSL_ENGINES"] = str(self.src / "engines")
        self.env["HARNESS_ACTIVE"] = "1"  # testutil's TAP output, as under make test
        self.disabled = set(subprocess.run(
            ["perl", "-I.", "-Mconfigdata", "-e", "print join(' ', keys %disabled)"],
            cwd=self.src, check=True, stdout=subprocess.PIPE, text=True).stdout.split())
        self.version = subprocess.run(
            [str(self.src / "apps" / "openssl"), "version"], env=self.env,
            check=True, stdout=subprocess.PIPE, text=True).stdout.strip()
        self.aesmux_names = self.list_aesmux_ciphers()

    def fail(self, message):
        self.failures.append(message)
        print("FAIL: " + message, flush=True)

    def list_aesmux_ciphers(self):
        """Every name of every cipher aesmux serves, upper case."""
        out = subprocess.run(
            [str(self.src / "apps" / "openssl"), "list", "-cipher-algorithms",
             "-provider-path", str(self.module.parent), "-provider",
             self.module.stem], env=self.env, check=True,
            stdout=subprocess.PIPE, text=True).stdout
        names = set()
        for line in out.splitlines():
            if line.rstrip().endswith("@ " + self.module.stem):
                for name in line.split("@")[0].strip(" {}").split(","):
                    names.add(name.strip().upper())
        if not names:
            sys.exit(f"{self.module} lists no ciphers under {self.version}")
        return names

    def config(self, name, aesmux):
        """An openssl.cnf: the default provider, and aesmux with a
        statistics file of its own ("preferred": default_properties =
        ?provider=aesmux; "required": the program's own property query asks
        for it); returns its path and the statistics prefix."""
        path = self.work / f"{name}.cnf"
        stats = self.work / "stats" / name
        lines = ["openssl_conf = openssl_init", "config_diagnostics = 1",
                 "[openssl_init]", "providers = provider_sect"]
        if aesmux == "preferred":
            lines.append("alg_section = evp_properties")
        lines += ["[provider_sect]", "default = default_sect"]
        if aesmux:
            lines.append("aesmux = aesmux_sect")
        lines += ["[default_sect]", "activate = 1"]
        if aesmux:
            lines += ["[aesmux_sect]", f"module = {self.module}", "activate = 1",
                      f"stats_file = {stats}"]
        if aesmux == "preferred":
            lines += ["[evp_properties]", "default_properties = ?provider=aesmux"]
        path.write_text("\n".join(lines) + "\n")
        return path, stats

    def program(self, name):
        return str(self.src / "test" / name)

    # -- the runs --------------------------------------------------------

    def evp_runs(self):
        """Each AES data file with the default provider alone and with
        aesmux preferred; its stanzas of the algorithms aesmux serves (a
        filtered copy) with the default provider alone and with aesmux
        required."""
        runs = []
        for data in sorted((self.src / "test" / "recipes" / "30-test_evp_data")
                           .glob("evpciph_aes*.txt")):
            served_copy = self.work / f"{data.stem}.aesmux.txt"
            if self.write_served_stanzas(data, served_copy) == 0:
                served_copy = None
            for mode in ("default", "preferred", "default-served", "required"):
                name = f"evp-{data.stem}-{mode}"
                target = data if mode in ("default", "preferred") else served_copy
                if target is None:
                    continue
                if mode.startswith("default"):
                    cnf, stats = self.src / "test" / "default.cnf", None
                else:
                    cnf, stats = self.config(name, mode)
                query = ["-propquery", "provider=aesmux"] if mode == "required" else []
                runs.append(Run(name, [self.program("evp_test"), "-config",
                                       str(cnf), *query, str(target)],
                                self.env, self.src, stats))
        return runs

    def write_served_stanzas(self, data, out):
        """Copies the stanzas of `data` that name no cipher or one aesmux
        serves; returns how many cipher stanzas it kept."""
        kept, blocks = 0, re.split(r"\n\s*\n", data.read_text())
        with open(out, "w") as f:
            for block in blocks:
                m = re.search(r"^Cipher\s*=\s*(\S+)", block, re.M)
                if m and m.group(1).upper() not in self.aesmux_names:
                    continue
                kept += bool(m)
                f.write(block.strip("\n") + "\n\n")
        return kept

    def ssl_test_runs(self):
        runs = []
        env = dict(self.env, TEST_CERTS_DIR=str(self.src / "test" / "certs"),
                   CTLOG_FILE=str(self.src / "test" / "ct" / "log_list.cnf"))
        for conf in sorted((self.src / "test" / "ssl-tests").glob("*.cnf")):
            needs = SSL_TEST_NEEDS.get(conf.name, [])
            if self.disabled & set(needs):
                print(f"  ssl_test {conf.name}: skipped, as OpenSSL's recipe does "
                      f"without {' or '.join(needs)}")
                continue
            for mode in ("default", "aesmux"):
                # "none": the default library context, from OPENSSL_CONF.
                name = f"ssl-{conf.stem}-none-{mode}"
                if mode == "default":
                    cnf, stats = self.config(name, None)
                else:
                    cnf, stats = self.config(name, "preferred")
                runs.append(Run(name, [self.program("ssl_test"), str(conf), "none"],
                                dict(env, OPENSSL_CONF=str(cnf)), self.src, stats))
                # "default": a library context of its own, loaded from the
                # configuration file given (the recipe gives none).
                name = f"ssl-{conf.stem}-libctx-{mode}"
                argv = [self.program("ssl_test"), str(conf), "default"]
                stats = None
                if mode == "aesmux":
                    cnf, stats = self.config(name, "preferred")
                    argv.append(str(cnf))
                runs.append(Run(name, argv, env, self.src, stats))
        return runs

    def sslapitest_runs(self):
        runs = []
        data = self.src / "test" / "recipes" / "90-test_sslapi_data"
        source = (self.src / "test" / "sslapitest.c").read_text()
        for mode in ("default", "aesmux"):
            name = f"sslapitest-{mode}"
            if mode == "default":
                cnf, stats = self.src / "test" / "default.cnf", None
            else:
                cnf, stats = self.config(name, "preferred")
            argv = [self.program("sslapitest"), str(self.src / "test" / "certs"),
                    str(data / "passwd.txt"), str(self.work / f"{name}.tmp"),
                    "default", str(cnf), str(data / "dhparams.pem")]
            if "test_get_argument(6)" in source:  # 3.2 and later
                argv.append(str(data))
            # A working directory of its own: sslapitest writes files there
            # (tls-prov-key.pem), which the two runs would race for.
            cwd = self.work / f"{name}.cwd"
            cwd.mkdir(exist_ok=True)
            runs.append(Run(name, argv, self.env, cwd, stats))
        return runs

    def recordlentest_runs(self):
        runs = []
        pem = str(self.src / "apps" / "server.pem")
        for mode in ("default", "aesmux"):
            name = f"recordlentest-{mode}"
            cnf, stats = self.config(name, None if mode == "default" else "preferred")
            runs.append(Run(name, [self.program("recordlentest"), pem, pem],
                            dict(self.env, OPENSSL_CONF=str(cnf)), self.src, stats))
        return runs

    # -- the checks ------------------------------------------------------

    def check_served(self, run, want_algorithms=None):
        counts = served(run.stats)
        if counts is None:
            self.fail(f"{run.name}: aesmux wrote no statistics (not loaded?)")
            return None
        if sum(counts.values()) == 0:
            self.fail(f"{run.name}: aesmux served no request")
        for alg in want_algorithms or ():
            if counts[alg] == 0:
                self.fail(f"{run.name}: aesmux served no {alg} request")
        return counts

    def check_tap_parity(self, label, base, ours):
        if base.status != 0:
            self.fail(f"{label}: fails with the default provider alone "
                      f"(exit {base.status}); see {self.log(base)}")
            return
        b, o = base.tap(), ours.tap()
        if not b:
            self.fail(f"{label}: no test results in {self.log(base)}")
            return
        if ours.status != 0 or b != o:
            diff = [f"{x} | {y}" for x, y in zip(b, o) if x != y][:5]
            self.fail(f"{label}: with aesmux exit {ours.status}, "
                      f"{len(o)} results against {len(b)}; first differences: "
                      f"{diff}; see {self.log(ours)}")

    def log(self, run):
        path = self.work / f"{run.name}.log"
        path.write_text(" ".join(run.argv) + "\n" + run.output)
        return path

    def check_evp(self, runs):
        by_file = collections.defaultdict(dict)
        for run in runs:
            stem, mode = re.match(r"evp-(.*)-(default|preferred|default-served|required)$",
                                  run.name).groups()
            by_file[stem][mode] = run
        for stem, modes in sorted(by_file.items()):
            counts = {}
            for mode, run in modes.items():
                m = COMPLETED.search(run.output)
                counts[mode] = tuple(map(int, m.groups())) if m else None
                self.log(run)
                if mode.startswith("default") and (
                        run.status != 0 or counts[mode] is None or counts[mode][1] != 0):
                    self.fail(f"evp_test {stem} ({mode}): fails with the default "
                              f"provider alone: {counts[mode]}; see {self.log(run)}")
            base = counts["default"]
            if modes["preferred"].status != 0 or counts["preferred"] != base:
                self.fail(f"evp_test {stem}, aesmux preferred: {counts['preferred']} "
                          f"(tests, errors, skipped) against {base}")
            line = (f"  evp_test {stem}: {base[0]} stanzas, {base[2]} skipped, "
                    f"the same with aesmux preferred")
            if "required" in modes:
                req, want = counts["required"], counts["default-served"]
                if modes["required"].status != 0 or req != want:
                    self.fail(f"evp_test {stem}, aesmux required: {req} against "
                              f"{want}; see {self.log(modes['required'])}")
                line += f"; the {want[0]} of algorithms aesmux serves with aesmux required"
                served_copy = pathlib.Path(modes["required"].argv[-1])
                file_algs = {m.group(1).upper() for m in re.finditer(
                    r"^Cipher\s*=\s*(\S+)", served_copy.read_text(), re.M)}
                for mode in ("preferred", "required"):
                    self.check_served(modes[mode], self.canonical(file_algs))
            else:
                line += " (no stanza of an algorithm aesmux serves)"
            print(line)

    def canonical(self, names):
        """aesmux's statistics name each algorithm by its first name."""
        aliases = {"AES128": "AES-128-CBC", "AES192": "AES-192-CBC",
                   "AES256": "AES-256-CBC", "ID-AES128-GCM": "AES-128-GCM",
                   "ID-AES192-GCM": "AES-192-GCM", "ID-AES256-GCM": "AES-256-GCM"}
        return {aliases.get(n, n) for n in names if not n[0].isdigit()}

    def check_pairs(self, runs, label):
        pairs = collections.defaultdict(dict)
        for run in runs:
            stem, mode = run.name.rsplit("-", 1)
            pairs[stem][mode] = run
        total = 0
        for stem, modes in sorted(pairs.items()):
            self.log(modes["default"])
            self.log(modes["aesmux"])
            self.check_tap_parity(stem, modes["default"], modes["aesmux"])
            total += len(modes["default"].tap())
        return pairs, total


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--openssl", required=True,
                        help="the built OpenSSL source tree (<cache>/src)")
    parser.add_argument("--module", required=True, help="aesmux.so")
    parser.add_argument("--work", required=True, help="a directory for logs")
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("suites", nargs="*",
                        default=["evp", "ssl", "sslapi", "recordlen"])
    args = parser.parse_args()
    suites = Suites(args)
    print(f"OpenSSL under test: {suites.version} ({suites.src}); "
          f"aesmux: {suites.module} ({len(suites.aesmux_names)} cipher names)")

    plan = {"evp": suites.evp_runs, "ssl": suites.ssl_test_runs,
            "sslapi": suites.sslapitest_runs, "recordlen": suites.recordlentest_runs}
    runs = {name: plan[name]() for name in args.suites}
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        # The longest first, so that the short ones fill in around them.
        everything = sorted((r for rs in runs.values() for r in rs),
                            key=lambda r: not r.name.startswith("sslapitest"))
        for run in pool.map(lambda r: r(), everything):
            pass

    if "evp" in runs:
        suites.check_evp(runs["evp"])
    for name, label in (("ssl", "ssl_test"), ("sslapi", "sslapitest"),
                        ("recordlen", "recordlentest")):
        if name not in runs:
            continue
        pairs, total = suites.check_pairs(runs[name], label)
        requests = collections.Counter()
        for stem, modes in pairs.items():
            counts = served(modes["aesmux"].stats)
            if counts:
                requests.update(counts)
        if sum(requests.values()) == 0:
            suites.fail(f"{label}: aesmux served no request in any run")
        seconds = max(r.seconds for r in runs[name])
        print(f"  {label}: {len(pairs)} runs, {total} results, the same with aesmux; "
              f"aesmux served {sum(requests.values())} requests "
              f"({', '.join(f'{a} {n}' for a, n in sorted(requests.items()) if n)}); "
              f"longest run {seconds:.0f} s")
    print(f"  {sum(len(r) for r in runs.values())} runs in "
          f"{time.monotonic() - start:.0f} s; logs in {suites.work}")
    if suites.failures:
        print(f"{len(suites.failures)} difference(s) from the default provider alone")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
