#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
"""The documentation agrees with the declaration of the settings.

    docs_drift_test.py BUILD_DIR            checks, exit status 1 on any drift
    docs_drift_test.py BUILD_DIR --update   rewrites the generated parts

The settings are declared once (provider/route/settings.cc, SettingKeys());
BUILD_DIR/docs/settings_reference prints their reference. Checked:
- each generated part of a checked-in file (docs/settings.md whole; between
  their markers, the settings of openssl.cnf.example, README.md's table and
  docs/engine.md's list of control commands)
  is what the generator prints now: a key added to the declaration alone,
  or a default changed there, fails here until --update rewrites them;
- the man page the build made, aesmux.7, is the generator's output for its
  template;
- the ENGINE the build made (where it did) offers exactly one control
  command per setting, as the declaration names them, and DUMP_STATS;
- every AESMUX_* variable and per-family key the user documentation names
  is a setting (or one of the few other variables aesmux reads);
- aesmux(7)'s differences from the default provider are docs/differences.md's,
  one for one and in its order (each item starts as the document's does);
- every AESMUX_* variable the scripts take from the environment, but the
  settings, is one aesmux accepts without a warning: `aesmux info` with
  them set loads aesmux quietly.
"""
import os
import re
import subprocess
import sys

SOURCE = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))

# (file, form of settings_reference, first line's prefix, last line) of
# each generated part; a part without markers is the whole file.
PARTS = [
    ("docs/settings.md", "markdown", None, None),
    ("openssl.cnf.example", "cnf", "# --- aesmux settings,",
     "# --- end of the aesmux settings"),
    ("README.md", "readme", "<!-- settings:", "<!-- end of settings -->"),
    ("docs/engine.md", "engine", "<!-- engine controls:",
     "<!-- end of engine controls -->"),
]

# Files whose names of settings must be settings.
USER_DOCS = ["README.md", "openssl.cnf.example", "docs/aesmux.1.in",
             "docs/aesmux.7.in", "docs/design.md", "docs/afalg.md",
             "docs/engine.md", "docs/operating.md", "docs/security.md",
             "docs/differences.md"]
# Variables aesmux reads that are not settings; the scripts' own variables
# and the build's options (found in these files) are not settings either.
OTHER_VARIABLES = {"AESMUX_TRACE"}
# The prefixes of the test scripts' variables, which aesmux passes
# (kTestPrefixes, provider/route/settings.cc): named as prefixes in the
# user documentation, not as settings.
TEST_PREFIXES = ("AESMUX_TEST_", "AESMUX_FUZZ_")
BUILD_FILES = ["CMakeLists.txt", "scripts"]

failures = []


def fail(message):
    failures.append(message)
    print("FAIL: " + message)


def generate(build, *args):
    return subprocess.run(
        [os.path.join(build, "docs", "settings_reference"), *args],
        check=True, capture_output=True, text=True).stdout


def read(path):
    with open(os.path.join(SOURCE, path), encoding="utf-8") as f:
        return f.read()


def write(path, text):
    with open(os.path.join(SOURCE, path), "w", encoding="utf-8") as f:
        f.write(text)


def check_part(build, path, form, first, last, update):
    """The generated part of `path` against the generator's output."""
    want = generate(build, form)
    text = read(path)
    if first is None:
        have, replaced = text, want
    else:
        lines = text.splitlines(keepends=True)
        starts = [i for i, line in enumerate(lines) if line.startswith(first)]
        ends = [i for i, line in enumerate(lines) if line.rstrip("\n") == last]
        if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
            fail(f"{path}: no generated part (one line starting '{first}', "
                 f"one '{last}' after it)")
            return
        have = "".join(lines[starts[0]:ends[0] + 1])
        replaced = ("".join(lines[:starts[0]]) + want +
                    "".join(lines[ends[0] + 1:]))
    if have == want:
        print(f"ok: {path}: its {form} part is the declaration's")
    elif update:
        write(path, replaced)
        print(f"updated: {path}")
    else:
        fresh = os.path.join(build, "docs", "drift." + form)
        with open(fresh, "w", encoding="utf-8") as f:
            f.write(want)
        diff = subprocess.run(
            ["diff", "-u", "--label", f"{path} (checked in)", "--label",
             "settings_reference " + form, "-", fresh],
            input=have, capture_output=True, text=True).stdout
        print("\n".join(diff.splitlines()[:40]))
        fail(f"{path} differs from the declaration of the settings "
             f"(tests/docs/docs_drift_test.py {build} --update rewrites it)")


def check_man(build):
    page = os.path.join(build, "aesmux.7")
    want = generate(build, "man", os.path.join(build, "docs", "aesmux.7.in"))
    with open(page, encoding="utf-8") as f:
        have = f.read()
    if have == want:
        print("ok: aesmux.7 holds the declaration's settings")
    else:
        fail(f"{page} is not what settings_reference makes of its template")


def check_engine(build, names):
    engine = os.path.join(build, "engine_compat", "aesmux.so")
    if not os.path.exists(engine):
        print("ok: no ENGINE in this build, no control commands to check")
        return
    env = dict(os.environ, OPENSSL_CONF="/dev/null",
               OPENSSL_ENGINES=os.path.dirname(engine))
    listing = subprocess.run(["openssl", "engine", "-vvv", "aesmux"],
                             capture_output=True, text=True, env=env).stdout
    commands = re.findall(r"^\s+([A-Z0-9_]+): ", listing, re.MULTILINE)
    if commands == names + ["DUMP_STATS"]:
        print(f"ok: the ENGINE's {len(commands)} control commands are the "
              "settings' and DUMP_STATS")
    else:
        fail("the ENGINE's control commands are not the declaration's: "
             f"{' '.join(commands)} (expected {' '.join(names)} DUMP_STATS)")


def source_files(entries):
    """The checkout's files ENTRIES names: files, and the files directly in
    folders."""
    files = []
    for entry in entries:
        path = os.path.join(SOURCE, entry)
        if os.path.isdir(path):
            files += [os.path.join(entry, f) for f in sorted(os.listdir(path))
                      if os.path.isfile(os.path.join(path, f))]
        else:
            files.append(entry)
    return files


def check_names(names, keys):
    """Names of settings in the user documentation exist."""
    variables = {"AESMUX_" + name for name in names} | OTHER_VARIABLES
    others = set()
    for name in source_files(BUILD_FILES):
        others |= set(re.findall(r"\bAESMUX_[A-Z0-9_]+", read(name)))
    families = ("ecb", "cbc", "ctr", "xts", "gcm")
    for path in USER_DOCS:
        if not os.path.exists(os.path.join(SOURCE, path)):
            continue
        text = read(path).replace("\\-", "-").replace("\\fI", "").replace(
            "\\fB", "").replace("\\fR", "")
        for prefix in TEST_PREFIXES:
            text = re.sub(rf"\b{prefix}(?![A-Z0-9<])", "", text)
        unknown = set()
        for variable in re.findall(r"\bAESMUX_[A-Z0-9_<>]*[A-Z0-9>]", text):
            if "<FAMILY>" in variable:
                expanded = {variable.replace("<FAMILY>", f.upper())
                            for f in families}
                if not expanded & variables:
                    unknown.add(variable)
            elif variable not in variables | others:
                unknown.add(variable)
        for key in re.findall(r"(?<![\w.<>-])((?:ecb|cbc|ctr|xts|gcm|<family>)"
                              r"\.[a-z_]+)", text):
            if key.startswith("<family>."):
                if not any(key.replace("<family>", f) in keys
                           for f in families):
                    unknown.add(key)
            elif key not in keys:
                unknown.add(key)
        if unknown:
            fail(f"{path} names settings that do not exist: "
                 f"{', '.join(sorted(unknown))}")
        else:
            print(f"ok: {path} names only settings that exist")


def opening(text, count=4):
    """The first words of a list item, without markup or parentheses."""
    text = re.sub(r"\([^()]*\)", " ", text.replace("\\-", "-"))
    text = re.sub(r"[^\w\s'-]", " ", text.replace("`", ""))
    return " ".join(text.split()[:count])


def check_differences():
    doc = read("docs/differences.md")
    items = [block[2:] for block in re.split(r"\n(?=- )", doc)
             if block.startswith("- ")]
    man = read("docs/aesmux.7.in")
    start = man.index(".SH DIFFERENCES")
    section = man[start:man.index("\n.SH ", start + 1)]
    man_items = []
    for item in section.split(".IP \\(bu")[1:]:
        words = []
        for line in item.splitlines()[1:]:
            if re.match(r"\.(B|I|BR|BI|RB) ", line):
                words.append(line.split(" ", 1)[1].replace('"', " "))
            elif not line.startswith("."):
                words.append(line)
        man_items.append(" ".join(words))
    ours = [opening(item) for item in items]
    theirs = [opening(item) for item in man_items]
    if ours != theirs:
        fail("aesmux(7)'s differences are not docs/differences.md's:\n  " +
             "\n  ".join(f"{a!r} | {b!r}" for a, b in
                          zip(ours + [""] * len(theirs),
                              theirs + [""] * len(ours)) if a or b))
    else:
        print(f"ok: aesmux(7) lists docs/differences.md's {len(ours)} "
              "differences, in order")


def check_script_variables(build, names):
    """aesmux warns of no variable the scripts read from the environment
    (but the settings, whose values it checks)."""
    variables = set()
    for name in source_files(["scripts", "bench", ".ci"]):
        variables |= set(re.findall(r"\$\{(AESMUX_[A-Z0-9_]+):?[-=]",
                                    read(name)))
    variables -= {"AESMUX_" + name for name in names}
    env = dict(os.environ, OPENSSL_CONF="/dev/null",
               OPENSSL_MODULES=os.path.join(build, "provider"))
    env.update({variable: "1" for variable in variables})
    listing = subprocess.run([os.path.join(build, "provider", "aesmux"), "info"],
                             env=env, capture_output=True, text=True)
    refused = sorted(v for v in variables if f"'{v}' is not a variable"
                     in listing.stdout + listing.stderr)
    if listing.returncode != 0 or refused or not variables:
        fail(f"aesmux info with the scripts' variables set "
             f"({', '.join(sorted(variables))}): exit status "
             f"{listing.returncode}, warned of {', '.join(refused) or 'none'}")
    else:
        print(f"ok: aesmux accepts the {len(variables)} variables the "
              "scripts read")


def main():
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and
                                       sys.argv[2] != "--update"):
        print(__doc__)
        return 2
    build = os.path.abspath(sys.argv[1])
    update = len(sys.argv) == 3
    for path, form, first, last in PARTS:
        check_part(build, path, form, first, last, update)
    rows = [line.split() for line in generate(build, "names").splitlines()]
    keys = {row[0] for row in rows}
    names = [row[1] for row in rows]
    check_man(build)
    check_engine(build, names)
    check_names(names, keys)
    check_differences()
    check_script_variables(build, names)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
