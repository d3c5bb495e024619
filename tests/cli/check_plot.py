# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
"""Checks a plot of `aesmux calibrate` as a reader would see it.

usage: check_plot.py PLOT.svg

- It is well-formed XML, and Debian's rsvg-convert renders it to a PNG of
  its size.
- Every path in the legend has a colour of its own (and, among the first
  ten, a dash pattern of its own), none of them the thresholds' black, and
  every curve is drawn in its path's style.
- Both axes are logarithmic: the size ticks (16, 64, 256, ...) are evenly
  spaced, and so are the decade ticks of the throughput.
- No two pieces of text overlap: each <text> carries the box the generator
  reserved for it (data-box="x y w h"), the boxes are pairwise disjoint,
  and the ink rsvg-convert draws for each text lies inside its box. (The
  ink is read from rsvg-convert's SVG output, where every glyph is a path
  in absolute coordinates, each text given a colour of its own first.)

Exits non-zero with the reason on the first failure.
"""
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
ET.register_namespace("", NS[1:-1])
# The white halo drawn around threshold labels reaches this far past ink.
HALO = 1.5
# Rounding of coordinates in the SVG (one decimal) and in rsvg's output.
SLACK = 0.15


def fail(message):
    sys.exit("check_plot: " + message)


def box_of(element):
    x, y, w, h = (float(v) for v in element.get("data-box").split())
    return (x, y, x + w, y + h)


def overlaps(a, b):
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def render(svg_bytes, fmt):
    result = subprocess.run(["rsvg-convert", "-f", fmt], input=svg_bytes,
                            capture_output=True)
    if result.returncode != 0:
        fail("rsvg-convert -f %s failed: %s" % (fmt, result.stderr.decode()))
    return result.stdout


def check_styles(root):
    legend = [g for g in root.iter(NS + "g")
              if g.get("class") == "legend-entry" and g.get("data-path")]
    styles = {}
    for entry in legend:
        line = entry.find(NS + "line")
        styles[entry.get("data-path")] = (line.get("stroke"),
                                          line.get("stroke-dasharray", ""))
    if not styles:
        fail("no paths in the legend")
    colours = [c for c, _ in styles.values()]
    if len(set(colours)) != len(colours):
        fail("paths share a colour: %s" % styles)
    if any(c.lower() in ("#000", "#000000", "black") for c in colours):
        fail("a path is drawn in the thresholds' black: %s" % styles)
    dashes = [d for _, d in list(styles.values())[:10]]
    if len(set(dashes)) != len(dashes):
        fail("paths share a dash pattern: %s" % styles)
    for curve in root.iter(NS + "polyline"):
        want = styles.get(curve.get("data-path"))
        got = (curve.get("stroke"), curve.get("stroke-dasharray", ""))
        if want != got:
            fail("curve %s drawn as %s, its legend entry as %s" %
                 (curve.get("data-path"), got, want))
    return len(styles)


def even(values, what):
    steps = [b - a for a, b in zip(values, values[1:])]
    if len(steps) < 2:
        fail("too few %s ticks to see the scale: %s" % (what, values))
    if max(steps) - min(steps) > 0.2:
        fail("%s ticks not evenly spaced (not logarithmic): %s" % (what, values))


def check_axes(root):
    panels = [g for g in root.iter(NS + "g") if g.get("class") == "panel"]
    if not panels:
        fail("no panels")
    for panel in panels:
        sizes = [t for t in panel.iter(NS + "text")
                 if t.get("class") == "size-tick"]
        # Powers of four apart, so evenly spaced on a log axis only.
        even([float(t.get("x")) for t in sizes], "size")
        rates = [t for t in panel.iter(NS + "text")
                 if t.get("class") == "rate-tick"]
        values = [float(t.text) for t in rates]
        for a, b in zip(values, values[1:]):
            if abs(b / a - 10) > 1e-9:
                fail("throughput ticks are not decades: %s" % values)
        even([float(t.get("y")) for t in rates], "throughput")
    return len(panels)


def check_text(root, source):
    texts = list(root.iter(NS + "text"))
    for t in texts:
        if t.get("data-box") is None:
            fail("text %r has no box" % t.text)
    boxes = [box_of(t) for t in texts]
    for i, a in enumerate(boxes):
        for j in range(i + 1, len(boxes)):
            if overlaps(a, boxes[j]):
                fail("texts %r and %r overlap: %s %s" %
                     (texts[i].text, texts[j].text, a, boxes[j]))
    # Each text in a colour of its own (index + 1, as RGB), then rendered
    # to SVG, where rsvg-convert writes each glyph run as a filled path.
    for i, t in enumerate(texts):
        t.set("fill", "#%06x" % (i + 1))
    rendered = render(ET.tostring(root), "svg").decode()
    ink = {}
    for style, d in re.findall(r'<path style="([^"]*)" d="([^"]*)"', rendered):
        fill = re.search(r"fill:rgb\(([\d.]+)%,([\d.]+)%,([\d.]+)%\)", style)
        if fill is None or "stroke:none" not in style:
            continue
        r, g, b = (round(float(v) * 255 / 100) for v in fill.groups())
        index = (r << 16 | g << 8 | b) - 1
        if not 0 <= index < len(texts):
            continue
        numbers = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", d)]
        xs, ys = numbers[0::2], numbers[1::2]
        if xs:
            old = ink.get(index, (1e9, 1e9, -1e9, -1e9))
            ink[index] = (min(old[0], min(xs)), min(old[1], min(ys)),
                          max(old[2], max(xs)), max(old[3], max(ys)))
    for i, t in enumerate(texts):
        if not (t.text or "").strip():
            continue
        if i not in ink:
            fail("text %r drew no ink" % t.text)
        halo = HALO if t.get("class") == "threshold-label" else 0
        box, got = boxes[i], ink[i]
        if (got[0] - halo < box[0] - SLACK or got[1] - halo < box[1] - SLACK or
                got[2] + halo > box[2] + SLACK or got[3] + halo > box[3] + SLACK):
            fail("text %r inks %s, outside its box %s (%s)" %
                 (t.text, got, box, source))
    return len(texts)


def main():
    path = sys.argv[1]
    data = open(path, "rb").read()
    try:
        root = ET.fromstring(data)
    except ET.ParseError as e:
        fail("%s is not well-formed XML: %s" % (path, e))
    png = render(data, "png")
    width, height = (int(float(root.get(k))) for k in ("width", "height"))
    if (png[:8] != b"\x89PNG\r\n\x1a\n" or
            (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big"))
            != (width, height)):
        fail("rsvg-convert's PNG is not %dx%d" % (width, height))
    paths = check_styles(root)
    panels = check_axes(root)
    texts = check_text(root, path)
    print("%s: renders; %d paths, each its own colour and dash; %d panels "
          "with logarithmic axes; %d texts, none overlapping" %
          (path, paths, panels, texts))


if __name__ == "__main__":
    main()
