# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
"""Checks what `aesmux calibrate` wrote against what the provider reports.

usage: check_calibration.py CALIBRATION_FILE PLOT.svg INFO.json

INFO.json is `aesmux info --json` of aesmux loaded with the calibration
file. Checks that every threshold in the file is in force with the origin
"calibration", and that the plot is well-formed SVG whose legend names the
paths this machine has (simd at each usable tier, fallback, mb and the
two threads paths where there are multi-buffer kernels) and whose 28
panels (algorithm x direction) each have one curve per path that serves
them (mb and threads: CBC encryption only).
Exits non-zero with the reason on the first difference.
"""
import json
import sys
import xml.etree.ElementTree as ET

calibration, plot, info_json = sys.argv[1:]
info = json.load(open(info_json))

written = {}
for line in open(calibration):
    if line.strip() and not line.startswith("#"):
        key, value = (part.strip() for part in line.split("=", 1))
        written[key] = value
settings = {s["key"]: s for s in info["settings"]}
assert written, "no thresholds written"
for key, value in written.items():
    s = settings[key]
    assert (s["value"], s["origin"]) == (value, "calibration"), (key, s)

ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(plot).getroot()
legend = [e.get("data-path") for e in root.iter(ns + "g")
          if e.get("class") == "legend-entry"]
expected = ["simd " + t["name"] for t in info["tiers"] if t["state"] == "usable"]
expected.append("fallback")
assert legend[:len(expected)] == expected, (legend, expected)
mb = [p for p in legend if p.startswith(("mb", "threads"))]
assert (info["mb_tier"] == "none") == (not mb), (info["mb_tier"], legend)
assert not mb or len(mb) == 3, legend  # mb, threads combined, threads alone
assert ("cbc.mb_threads_min_len" in written) == bool(mb), written
panels = [g for g in root.iter(ns + "g") if g.get("class") == "panel"]
assert len(panels) == 28, len(panels)
for panel in panels:
    curves = [c.get("data-path") for c in panel.iter(ns + "polyline")]
    want = [p for p in legend if not p.startswith(("mb", "threads", "afalg"))]
    if (panel.get("data-algorithm").endswith("CBC")
            and panel.get("data-direction") == "encrypt"):
        want += mb
    assert [c for c in curves if not c.startswith("afalg")] == want, (
        panel.attrib, curves)
    assert len(curves) == len(set(curves)), curves
    for curve in panel.iter(ns + "polyline"):
        assert len(curve.get("points").split()) >= 5, curve.attrib
