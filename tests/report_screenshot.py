#!/usr/bin/env python3
"""Renders `fusetune report` pages with headless Chromium and checks the screenshots.

For each preset (kernelbench-31, kernelbench-32), with a fresh database holding the shipped H200
records: run `fusetune report`, take a screenshot at 1280 px wide, and check with Pillow that
  - every plot shows up (found by its plot-area tint, which the page declares as data-plot-bg)
    and is not blank (many non-tint pixels, several distinct colors),
  - the sorted-times plot shows as many bars as the HTML declares (data-bars): the bars are
    drawn with crisp edges at least 3 px apart, so runs of bar colors in the pixel column just
    inside the plot's left edge count them,
  - the whole page fit the window (the screenshot ends in blank rows).

  report_screenshot.py --fusetune build/fusetune --out DIR   # DIR/report-kernelbench-31.png, ...

Exit 0: passed; 1: a check failed; 77: Chromium or Pillow is missing (skipped), unless
FUSETUNE_REQUIRE_CHROMIUM=1, which makes that a failure.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

PRESETS = ["kernelbench-31", "kernelbench-32"]
WIDTH = 1280
SKIP = 77
# Debian's python3-pil serves the system interpreter; a pyenv or venv python3 first on PATH
# may lack it.
SYSTEM_PYTHON = "/usr/bin/python3"


def unavailable(why):
    if os.environ.get("FUSETUNE_REQUIRE_CHROMIUM") == "1":
        print(f"FAIL: {why} (FUSETUNE_REQUIRE_CHROMIUM=1)")
        sys.exit(1)
    print(f"SKIP: {why}")
    sys.exit(SKIP)


def import_pillow():
    try:
        from PIL import Image, ImageChops  # noqa: F401
        return Image, ImageChops
    except ImportError:
        if (os.path.realpath(sys.executable) != os.path.realpath(SYSTEM_PYTHON) and os.path.exists(SYSTEM_PYTHON)
                and not os.environ.get("FUSETUNE_SCREENSHOT_REEXEC")):
            os.environ["FUSETUNE_SCREENSHOT_REEXEC"] = "1"
            os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON, os.path.abspath(__file__)] + sys.argv[1:])
        unavailable("Pillow is not installed (Debian: apt-get install python3-pil)")


class Failed(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failed(what)


def rgb(hex_color):
    return tuple(int(hex_color[i:i + 2], 16) for i in (1, 3, 5))


def attr(tag, name):
    m = re.search(rf'\b{name}="([^"]*)"', tag)
    return m.group(1) if m else None


def plots(html):
    """[(id, open tag, body)] for every <svg class="chart"> in the page."""
    out = []
    for m in re.finditer(r'<svg [^>]*class="chart"[^>]*>', html):
        end = html.find("</svg>", m.end())
        out.append((attr(m.group(0), "data-plot"), m.group(0), html[m.end():end]))
    return out


def window_height(html, svgs):
    """Generous: every chart stacked (parameter charts three to a row), tables, the header."""
    param = [int(attr(t, "height")) for i, t, _ in svgs if i == "param"]
    other = sum(int(attr(t, "height")) for i, t, _ in svgs if i != "param")
    rows = html.count("<tr")
    return min(16000, 900 + other + (len(param) + 2) // 3 * (max(param, default=0) + 14) + 40 * rows)


def mask_of(img, color, ImageChops):
    """A mask of the pixels that are exactly `color`."""
    bands = [b.point(lambda v, c=c: 255 if v == c else 0) for b, c in zip(img.split(), color)]
    return ImageChops.multiply(ImageChops.multiply(bands[0], bands[1]), bands[2])


def screenshot(chromium, html_path, png_path, height, tmp):
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
           "--force-device-scale-factor=1", f"--window-size={WIDTH},{height}", f"--screenshot={png_path}",
           f"--user-data-dir={os.path.join(tmp, 'profile')}", "--no-first-run", "--disable-extensions",
           "file://" + os.path.abspath(html_path)]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=180)
    check(r.returncode == 0 and os.path.exists(png_path),
          f"chromium failed (exit {r.returncode}): {r.stdout.strip()[-600:]}")


def check_page(preset, html, png_path, Image, ImageChops):
    svgs = plots(html)
    check("<script" not in html.lower(), "the page contains a <script")
    img = Image.open(png_path).convert("RGB")
    check(img.width == WIDTH, f"screenshot is {img.width} px wide, not {WIDTH}")
    bottom = img.crop((0, img.height - 40, img.width, img.height))
    check(bottom.getcolors() == [(bottom.width * bottom.height, (255, 255, 255))],
          "the page is taller than the window: its end is not in the screenshot")
    print(f"  {preset}: {img.width}x{img.height} screenshot, {len(svgs)} plots declared")

    for plot_id in dict.fromkeys(i for i, _, _ in svgs):
        tags = [t for i, t, _ in svgs if i == plot_id]
        tint = rgb(attr(tags[0], "data-plot-bg"))
        box = mask_of(img, tint, ImageChops).getbbox()
        check(box is not None, f"plot '{plot_id}': its plot area (tint {tint}) is not in the screenshot")
        region = img.crop(box)
        colors = region.getcolors(maxcolors=1 << 20)
        inked = sum(n for n, c in colors if c != tint)
        share = inked / (region.width * region.height)
        check(len(colors) >= 3 and share >= 0.01,
              f"plot '{plot_id}' looks blank: {len(colors)} colors, {share:.1%} of its area drawn")
        print(f"    plot {plot_id:9s} ({len(tags)} chart{'s' if len(tags) > 1 else ''}): area {box}, "
              f"{len(colors)} distinct colors, {share:.0%} drawn")

    times = [(t, body) for i, t, body in svgs if i == "times"]
    check(len(times) == 1, f"expected one sorted-times plot, found {len(times)}")
    tag, body = times[0]
    declared = int(attr(tag, "data-bars"))
    bar_tags = re.findall(r'<rect class="bar"[^>]*>', body)
    check(len(bar_tags) == declared, f"the times plot declares {declared} bars but holds {len(bar_tags)}")
    fills = {rgb(attr(t, "fill")) for t in bar_tags}
    area = re.search(r'<rect class="plot-area"[^>]*>', body).group(0)
    left, top, right, low = mask_of(img, rgb(attr(tag, "data-plot-bg")), ImageChops).getbbox()
    check(abs((low - top) - int(attr(area, "height"))) <= 1,
          f"times plot area is {low - top} px tall on screen, {attr(area, 'height')} in the SVG: not drawn 1:1")
    column = img.crop((left + 1, top, left + 2, low)).getdata()
    runs, run, lengths = 0, 0, []
    for px in list(column) + [None]:
        if px in fills:
            run += 1
        elif run:
            runs += 1
            lengths.append(run)
            run = 0
    heights = {int(attr(t, "height")) for t in bar_tags}
    check(runs == declared, f"the screenshot shows {runs} bars in the times plot, the HTML declares {declared}")
    check(all(length in heights for length in lengths), f"bar heights on screen {sorted(set(lengths))} != {heights}")
    print(f"    times plot: {runs} bars counted in pixel column x={left + 1} = {declared} declared "
          f"({len(fills)} bar colors, each bar {sorted(heights)} px tall)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fusetune", required=True, help="the fusetune binary")
    ap.add_argument("--out", required=True, help="folder for the screenshots")
    args = ap.parse_args()

    chromium = shutil.which("chromium")
    if not chromium:
        unavailable("chromium is not installed (Debian: apt-get install chromium)")
    Image, ImageChops = import_pillow()
    os.makedirs(args.out, exist_ok=True)

    failures = 0
    for preset in PRESETS:
        # Chromium's helpers may outlive it for a moment: a cleanup error is not a test failure.
        with tempfile.TemporaryDirectory(prefix="ft-shot-", ignore_cleanup_errors=True) as tmp:
            env = dict(os.environ, FUSETUNE_DB=os.path.join(tmp, "fresh.db"))
            html_path = os.path.join(tmp, f"report-{preset}.html")
            png_path = os.path.join(os.path.abspath(args.out), f"report-{preset}.png")
            try:
                r = subprocess.run([args.fusetune, "report", "--preset", preset, "-o", html_path], env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
                check(r.returncode == 0, f"fusetune report exited {r.returncode}: {r.stderr.strip()}")
                with open(html_path, encoding="utf-8") as f:
                    html = f.read()
                if os.path.exists(png_path):
                    os.remove(png_path)
                screenshot(chromium, html_path, png_path, window_height(html, plots(html)), tmp)
                check_page(preset, html, png_path, Image, ImageChops)
                print(f"ok   {preset}: {png_path}")
            except (Failed, subprocess.TimeoutExpired) as e:
                failures += 1
                print(f"FAIL {preset}: {e}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
