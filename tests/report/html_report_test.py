#!/usr/bin/python3
"""`nicsim report` in a real browser (CTest: cli_report_browser; docs/report.md).

Simulates scenarios/examples/rrul.toml (rrul, BQL off/on: two runs) and a small [vary] sweep of
the wire rate (three rates, two repetitions each: six runs, ping and TCP both ways), writes each as an HTML report, and opens
every run of every report in Debian's headless Chromium, driven by Selenium through
chromedriver, with networking disabled (a proxy on a closed port, every host name unresolvable;
the page's own Content-Security-Policy forbids loads too). Checks, per page:
  * no console message of level SEVERE (script errors, refused loads) and no error the page
    counted (data-errors);
  * the charts the results call for are there, independently of the page's own list: goodput
    over time (a run with TCP intervals), latency over time and CDF (probe samples), waiting per
    stage (stage times), one queue chart per queue series, the trade-off (several runs);
  * every chart drew its data: the number of values dygraphs laid out on the canvas
    (data-drawn, set by the page script from dygraphs' layout) equals the number the report put
    in (data-expected), and is not zero;
  * the trade-off's hover panel shows a run's varied parameter.
A copy of the rrul results whose label, varied value and probe name are markup
(`</script><img onerror=...>`) must draw the same, with that markup shown as text.
Then shows that the check fails: a copy of a report with one chart's data removed (its count
kept) must be reported as not drawn. Screenshots of every page are kept in OUT_DIR.
Bad input: a missing file and an unwritable output give one line and exit 2 / 1.

Usage: html_report_test.py NICSIM_BINARY SOURCE_DIR OUT_DIR
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:
    sys.exit("FAIL: python3-selenium is not installed (run scripts/setup.sh)")

nicsim, src, out_dir = (os.path.abspath(a) for a in sys.argv[1:4])
os.makedirs(out_dir, exist_ok=True)
work = tempfile.mkdtemp(prefix="nicsim-report-test-")
env = dict(os.environ, NICSIM_PRESETS=os.path.join(src, "presets"))
failures = []


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def nicsim_run(*args, want=0):
    p = subprocess.run([nicsim, *args], cwd=work, env=env, capture_output=True, text=True)
    if p.returncode != want:
        fail(f"nicsim {' '.join(args)}: exit {p.returncode}, want {want}: {p.stderr.strip()}")
    return p


SWEEP = """
[scenario]
name = "report test sweep"
duration = "2s"
seed = 3
[hosts.a]
cpu = "x86-desktop"
nic = "generic-1g"
[hosts.b]
cpu = "arm-cortex-a5"
nic = "stmmac"
[wire]
rate = "100Mbit"
delay = "200us"
[[traffic.tcp]]
from = "a"
to = "b"
streams = 2
[[traffic.tcp]]
from = "b"
to = "a"
streams = 1
[[traffic.ping]]
from = "a"
to = "b"
interval = "20ms"
[vary]
"wire.rate" = ["20Mbit", "50Mbit", "100Mbit"]
"""


def expected_charts(run):
    """The charts a run's results call for, from the results file itself."""
    want = set()
    busy = any(run["transfer"][d]["flows"] for d in ("a->b", "b->a"))
    if run["intervals"] and busy:
        want.add("goodput")
    samples = any(any(v is not None for v in p.get("series", {}).get("rtt_ms", []))
                  for p in run["latency_ms"].values())
    if samples or any(iv["latency_ms"] for iv in run["intervals"]):
        want.add("latency")
    if samples:
        want.add("cdf")
    if run["stages"]["a->b"] or run["stages"]["b->a"]:
        want.add("stages")
    for i, (name, q) in enumerate(sorted(run["queues"].items())):
        want.add(f"queue-{i}")
    return want


def browser():
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for a in ("--headless=new", "--disable-gpu", "--window-size=1280,4200",
              "--proxy-server=http://127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND",
              "--disable-background-networking", "--no-first-run",
              f"--user-data-dir={work}/profile"):
        opts.add_argument(a)
    if os.geteuid() == 0:
        opts.add_argument("--no-sandbox")  # Chromium refuses to run as root with its sandbox
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:  # Selenium reaches chromedriver at http://localhost:PORT
        socket.getaddrinfo("localhost", None)
    except socket.gaierror:
        sys.exit("html_report_test: 'localhost' does not resolve on this system (no /etc/hosts "
                 "entry?); Selenium talks to chromedriver through it")
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)


def check_page(driver, html, run_index, results, shot):
    """Problems of one report page opened at run_index (empty: all good)."""
    problems = []
    driver.get("about:blank")
    driver.get_log("browser")  # drop what came before
    driver.get(f"file://{html}#run={run_index}")
    WebDriverWait(driver, 60).until(
        lambda d: d.execute_script("return document.documentElement.dataset.ready") == "1")
    driver.save_screenshot(shot)
    for entry in driver.get_log("browser"):
        if entry["level"] == "SEVERE":
            problems.append("console: " + entry["message"])
    root = driver.execute_script("return Object.assign({}, document.documentElement.dataset)")
    if root.get("errors") != "0":
        problems.append(f"page counted {root.get('errors')} errors")
    if root.get("run") != str(run_index):
        problems.append(f"page shows run {root.get('run')}, want {run_index}")
    charts = driver.execute_script(
        "return Array.from(document.querySelectorAll('.chart')).map(function (b) {"
        " return [b.dataset.chart, b.dataset.expected, b.dataset.drawn]; })")
    got = {c[0]: c for c in charts}
    want = expected_charts(results["runs"][run_index])
    if len(results["runs"]) > 1:
        want.add("tradeoff")
    if len(results["runs"]) > 1 and all(r.get("rx_batching") for r in results["runs"]):
        want.add("knee")  # docs/rx-batching.md "The knee"
    for name in sorted(want - set(got)):
        problems.append(f"chart {name} is missing")
    for name, expected, drawn in charts:
        if expected in (None, "0") or drawn != expected:
            problems.append(f"chart {name} drew {drawn} of {expected} values")
    if "tradeoff" in got:
        hover = driver.find_element(By.ID, "tradeoff-info").text
        key = next(iter(results["runs"][0]["params"]))
        if key not in hover:
            problems.append(f"trade-off hover lacks the parameter {key}: {hover!r}")
    return problems


def check_zoom(driver, html):
    """Dragging across the goodput chart zooms it, and the latency chart follows."""
    driver.get(f"file://{html}#run=0")
    WebDriverWait(driver, 60).until(
        lambda d: d.execute_script("return document.documentElement.dataset.ready") == "1")
    x_range = "return document.querySelector('[data-chart=\"%s\"]').dataset.xRange"
    before = driver.execute_script(x_range % "goodput")
    graph = driver.find_element(By.CSS_SELECTOR, '[data-chart="goodput"] .graph')
    width = graph.size["width"]
    ActionChains(driver).move_to_element_with_offset(graph, -width // 5, 0).click_and_hold() \
        .move_by_offset(width // 4, 0).release().perform()
    after = driver.execute_script(x_range % "goodput")
    follower = driver.execute_script(x_range % "latency")
    lo0, hi0 = map(float, before.split(","))
    lo, hi = map(float, after.split(","))
    if not (lo0 < lo < hi < hi0):
        return [f"dragging did not zoom the goodput chart: {before} -> {after}"]
    if follower != after:
        return [f"the latency chart did not follow the zoom: {follower}, goodput {after}"]
    print(f"zoom: goodput x {before} -> {after}, latency follows")
    return []


EVIL = '</script><img src=x onerror="document.title=1"><b>&amp;'


def hostile_copy(results):
    """The results with the first run's label, varied value and ping's name made of markup."""
    bad = json.loads(json.dumps(results))
    run = bad["runs"][0]
    run["label"] = EVIL
    run["params"] = {k: EVIL for k in run["params"]}
    run["latency_ms"][EVIL] = run["latency_ms"].pop("ping")
    for iv in run["intervals"]:
        if "ping" in iv["latency_ms"]:
            iv["latency_ms"][EVIL] = iv["latency_ms"].pop("ping")
    return bad


def check_hostile(driver, html):
    """Markup in the results stays text: no element from it, the label shown as written."""
    problems = []
    driver.get(f"file://{html}#run=0")
    WebDriverWait(driver, 60).until(
        lambda d: d.execute_script("return document.documentElement.dataset.ready") == "1")
    # (dygraphs' legend makes <b> elements of its own: only the <img> and scripts are counted.)
    if driver.execute_script("return document.querySelectorAll('img').length") != 0:
        problems.append("markup from the results file became an element")
    if driver.execute_script("return document.scripts.length") != 4:
        problems.append("the page has other scripts than its own four")
    if not driver.title.startswith("nicsim report"):
        problems.append(f"a handler from the results file ran: title {driver.title!r}")
    cell = driver.find_element(By.CSS_SELECTOR, '#run-table tr[data-run="0"] td:nth-child(2)')
    if cell.text != EVIL:
        problems.append(f"the run table shows {cell.text!r}, not the label as written")
    legend = driver.find_element(By.CSS_SELECTOR, '[data-chart="latency"] .legend').text
    if EVIL not in legend:
        problems.append(f"the latency legend lacks the probe's name as written: {legend!r}")
    return problems


def main():
    # 1. Results: rrul (2 runs), a sweep (3 runs).
    shutil.copy(os.path.join(src, "scenarios/examples/rrul.toml"), work)
    with open(os.path.join(work, "sweep.toml"), "w") as f:
        f.write(SWEEP)
    nicsim_run("run", "rrul.toml", "--json", "rrul.json", "--quiet")
    nicsim_run("run", "sweep.toml", "--json", "sweep.json", "--quiet", "--repeat", "2")
    # The receive batching knee, shortened to 0.1 s per run (36 runs).
    with open(os.path.join(src, "scenarios/rx-batching/knee.toml")) as f:
        knee = f.read().replace('duration = "2s"', 'duration = "100ms"')
    with open(os.path.join(work, "knee.toml"), "w") as f:
        f.write(knee)
    nicsim_run("run", "knee.toml", "--json", "knee.json", "--quiet")

    # 2. Bad input: one line, exit 2 (unreadable results) / 1 (unwritable page), no page.
    p = nicsim_run("report", "missing.json", "-o", "x.html", want=2)
    if p.stderr.count("\n") != 1 or "missing.json" not in p.stderr:
        fail(f"missing file: not one line naming it: {p.stderr!r}")
    p = nicsim_run("report", "rrul.json", "-o", "/nonexistent/x.html", want=1)
    if p.stderr.count("\n") != 1 or "/nonexistent/x.html" not in p.stderr:
        fail(f"unwritable output: not one line naming it: {p.stderr!r}")
    if os.path.exists(os.path.join(work, "x.html")):
        fail("a page was written for a missing results file")

    # 3. The reports, in the browser.
    reports = {}
    for name in ("rrul", "sweep", "knee"):
        nicsim_run("report", f"{name}.json", "-o", f"{name}.html")
        html = os.path.join(work, f"{name}.html")
        shutil.copy(html, out_dir)
        with open(os.path.join(work, f"{name}.json")) as f:
            reports[name] = (html, json.load(f))
    with open(os.path.join(work, "hostile.json"), "w") as f:
        json.dump(hostile_copy(reports["rrul"][1]), f)
    nicsim_run("report", "hostile.json", "-o", "hostile.html")
    reports["hostile"] = (os.path.join(work, "hostile.html"), hostile_copy(reports["rrul"][1]))
    driver = browser()
    try:
        for name, (html, results) in reports.items():
            # (The knee's 36 runs: its first page is enough for its own chart.)
            for i in range(1 if name == "knee" else len(results["runs"])):
                shot = os.path.join(out_dir, f"{name}-run{i}.png")
                for problem in check_page(driver, html, i, results, shot):
                    failures.append(f"{name}.html#run={i}: {problem}")
                print(f"{name}.html#run={i}: checked, screenshot {shot}")

        failures.extend(check_zoom(driver, reports["rrul"][0]))
        failures.extend("hostile.html: " + p for p in check_hostile(driver, reports["hostile"][0]))

        # 4. The check can fail: the goodput chart's data removed, its count kept.
        html, results = reports["rrul"]
        with open(html) as f:
            page = f.read()
        m = re.search(r'(<script type="application/json" id="nicsim-data">)(.*?)(</script>)',
                      page, re.S)
        data = json.loads(m.group(2))
        broken_chart = next(c for c in data["runs"][0]["charts"] if c["id"] == "goodput")
        broken_chart["rows"] = []
        text = json.dumps(data).replace("<", "\\u003c").replace(">", "\\u003e")
        broken = os.path.join(work, "broken.html")
        with open(broken, "w") as f:
            f.write(page[:m.start(2)] + text + page[m.end(2):])
        problems = check_page(driver, broken, 0, results,
                              os.path.join(out_dir, "broken-run0.png"))
        if not any(p.startswith("chart goodput drew 0 of") for p in problems):
            failures.append(f"the check missed a chart without data: {problems}")
        else:
            print(f"broken.html: detected as it must be: {problems}")
    finally:
        driver.quit()
    if failures:
        fail("\n  ".join([""] + failures))
    shutil.rmtree(work, ignore_errors=True)
    print("cli_report_browser: ok")


main()
