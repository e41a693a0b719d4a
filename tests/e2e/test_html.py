"""The HTML page (--format html) in a real browser: headless Chromium opens the
page of a demo recording with no network, and the page must run without an
error, draw the demo's functions, list CPU by label value with the numbers of
labelprof's JSON for the same data, and filter by label (a click on a table
row, or the URL hash) so that other endpoints' functions leave the flame graph.
"""

import collections
import json
import re
import subprocess
import tempfile
import urllib.parse

import pytest

from conftest import FREQ, LABELPROF, count, labels_of, load_json, Profile, started, workload

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:  # installed by scripts/deps.sh (python3-selenium, chromium-driver)
    webdriver = None

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WAIT = 30

# tests/workloads/demo.c: the burn functions each endpoint runs (the handlers
# themselves may be tail calls, absent from stacks).
ENDPOINT_FUNCTIONS = {
    "/checkout": {"compute_tax", "render_template"},
    "/search": {"search_index", "render_template"},
    "/login": {"hash_password"},
}
DEMO_FUNCTIONS = set().union(*ENDPOINT_FUNCTIONS.values())
TENANTS = ["acme", "globex", "initech"]


def only_elsewhere(endpoint):
    """Functions that other endpoints run and endpoint does not."""
    others = set().union(*(f for e, f in ENDPOINT_FUNCTIONS.items() if e != endpoint))
    return others - ENDPOINT_FUNCTIONS[endpoint]


def run(cmd, timeout=120):
    proc = subprocess.run([str(c) for c in cmd], stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=timeout)
    cmdline = " ".join(map(str, cmd))
    assert proc.returncode == 0, f"`{cmdline}` exited {proc.returncode}: {proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """The demo recorded straight to HTML, and recorded to JSON then converted:
    (direct page, converted page, the JSON Profile)."""
    tmp = tmp_path_factory.mktemp("html")
    direct, doc, converted = tmp / "direct.html", tmp / "profile.json", tmp / "converted.html"
    with started([workload("demo"), "--duration", 60, "--threads", 2, "--quiet"]) as wl:
        for fmt, out in (("html", direct), ("json", doc)):
            run([LABELPROF, "record", "-F", FREQ, "--format", fmt, "-o", out, "-d", 2,
                 "-p", wl.pid])
        wl.proc.terminate()
    # unfolded: the side panel lists request_id's values, past "N more values"
    run([LABELPROF, "convert", doc, "-o", converted, "--format", "html",
         "--max-label-values", "0"])
    return direct, converted, Profile(load_json(doc))


@pytest.fixture(scope="module")
def browser():
    if webdriver is None:
        pytest.fail("python3-selenium is missing: run 'make deps'")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    profile_dir = tempfile.TemporaryDirectory(prefix="lp-chromium-")
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1000", f"--user-data-dir={profile_dir.name}",
                # No network even if the page asked for it: the test also checks it never does.
                "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
                "--host-resolver-rules=MAP * ~NOTFOUND"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    try:
        yield driver
    finally:
        driver.quit()
        profile_dir.cleanup()


def open_page(driver, path, fragment=""):
    for log in ("browser", "performance"):  # what came before (Chromium's own start page)
        driver.get_log(log)
    driver.get(path.as_uri() + fragment)
    WebDriverWait(driver, WAIT).until(
        lambda d: d.execute_script("return document.querySelectorAll('.frame').length > 0"))


def check_clean(driver):
    """No console error or uncaught exception, and nothing fetched but the file itself."""
    errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    assert not errors, f"console errors: {errors}"
    urls = [re.search(r'"url":"([^"]*)"', e["message"]).group(1)
            for e in driver.get_log("performance") if '"Network.requestWillBeSent"' in e["message"]]
    assert all(u.startswith(("file:", "data:")) for u in urls), f"network requests: {urls}"


def frame_names(driver):
    return set(driver.execute_script(
        "return Array.from(document.querySelectorAll('#flame .frame'), e => e.textContent)"))


def table(driver, key):
    """The label table of key: value -> samples (with '(not set)'; not the 'more values' row)."""
    rows = driver.execute_script("""
        for (const s of document.querySelectorAll('.label-key'))
            if (s.querySelector('h3 .key').textContent === arguments[0])
                return Array.from(s.querySelectorAll('tr.label-row'), r =>
                    [r.querySelector('td.value').textContent, Number(r.dataset.samples),
                     r.querySelector('.pct').textContent]);
        return null;""", key)
    assert rows is not None, f"no table for {key}"
    return {v: (n, float(pct.rstrip(" %"))) for v, n, pct in rows}


def click_row(driver, key, value):
    for section in driver.find_elements(By.CSS_SELECTOR, ".label-key"):
        if section.find_element(By.CSS_SELECTOR, "h3 .key").text == key:
            for row in section.find_elements(By.CSS_SELECTOR, "tr.label-row"):
                if row.find_element(By.CSS_SELECTOR, "td.value").text == value:
                    row.click()
                    return
    pytest.fail(f"no row {key}={value}")


def shown(driver):
    return int(driver.find_element(By.ID, "shown").get_attribute("data-samples"))


def expected_tables(profile):
    """Samples per value of every label key, '(not set)' included, from the JSON."""
    total = count(profile.samples)
    tables = collections.defaultdict(collections.Counter)
    for s in profile.samples:
        for k, v in labels_of(s):
            tables[k.decode()][v.decode()] += s["count"]
    for k, t in tables.items():
        if total - sum(t.values()):
            t["(not set)"] = total - sum(t.values())
    return total, tables


def test_html_tables_match_json(browser, pages):
    _, converted, profile = pages
    open_page(browser, converted)
    total, tables = expected_tables(profile)
    assert total > 0
    header = browser.find_element(By.CSS_SELECTOR, "#total-samples dd").text
    assert int(header.replace(",", "")) == total
    assert shown(browser) == total
    assert set(TENANTS) <= set(tables["tenant"]), tables["tenant"]
    for key in ("tenant", "endpoint", "step"):
        got = table(browser, key)
        for value, n in tables[key].items():
            assert value in got, f"{key}={value} missing from the page's table {got}"
            assert got[value][0] == n, f"{key}={value}: page {got[value][0]}, JSON {n}"
            assert abs(got[value][1] - 100 * n / total) <= 0.051, (key, value, got[value], n)
    # A filter from the URL: exactly the JSON's samples with both labels.
    browser.execute_script("location.hash = arguments[0]", "endpoint=%2Flogin&tenant=globex")
    want = count(s for s in profile.samples
                 if {(b"endpoint", b"/login"), (b"tenant", b"globex")} <= labels_of(s))
    WebDriverWait(browser, WAIT).until(lambda d: shown(d) == want)
    assert want > 0
    check_clean(browser)


def test_html_page(browser, pages, tmp_path):
    direct, _, _ = pages
    open_page(browser, direct)
    names = frame_names(browser)
    assert DEMO_FUNCTIONS <= names, f"missing from the flame graph: {DEMO_FUNCTIONS - names}"
    tenants = table(browser, "tenant")
    assert set(TENANTS) <= set(tenants), tenants
    assert abs(sum(pct for _, pct in tenants.values()) - 100) < 0.5

    # A click on a table row filters, and the filter goes to the URL.
    click_row(browser, "endpoint", "/login")
    WebDriverWait(browser, WAIT).until(lambda d: d.current_url.endswith("#endpoint=%2Flogin"))
    names = frame_names(browser)
    assert ENDPOINT_FUNCTIONS["/login"] <= names, names
    others = only_elsewhere("/login") & names
    assert not others, f"other endpoints' functions under endpoint=/login: {others}"
    login = shown(browser)
    # Filters combine with AND.
    click_row(browser, "tenant", "initech")
    WebDriverWait(browser, WAIT).until(lambda d: "tenant=initech" in d.current_url)
    fragment = urllib.parse.urlsplit(browser.current_url).fragment
    assert set(fragment.split("&")) == {"endpoint=%2Flogin", "tenant=initech"}
    assert 0 < shown(browser) < login
    assert len(browser.find_elements(By.CSS_SELECTOR, "#filters .chip")) == 2
    browser.save_screenshot(str(tmp_path / "filtered.png"))
    browser.find_element(By.ID, "clear-filters").click()
    WebDriverWait(browser, WAIT).until(lambda d: not urllib.parse.urlsplit(d.current_url).fragment)
    assert DEMO_FUNCTIONS <= frame_names(browser)

    # Zoom into a frame, then reset.
    frame = next(e for e in browser.find_elements(By.CSS_SELECTOR, "#flame .frame")
                 if e.text == "search_index")
    ActionChains(browser).move_to_element(frame).perform()
    tooltip = browser.find_element(By.ID, "tooltip")
    assert tooltip.is_displayed() and "search_index" in tooltip.text and "samples" in tooltip.text
    frame.click()
    names = frame_names(browser)
    assert "search_index" in names and not {"hash_password", "compute_tax"} & names, names
    browser.find_element(By.ID, "reset-zoom").click()
    assert "hash_password" in frame_names(browser)

    # Search highlights matching frames.
    browser.find_element(By.ID, "search").send_keys("hash_pass")
    matched = {e.text for e in browser.find_elements(By.CSS_SELECTOR, "#flame .frame.match")}
    assert matched == {"hash_password"}, matched
    browser.save_screenshot(str(tmp_path / "page.png"))
    print(f"screenshots: {tmp_path}/page.png {tmp_path}/filtered.png")
    check_clean(browser)


def sources_of(profile, function):
    """Every "file:line" where function ran in the JSON, inlined or not."""
    out = set()
    for s in profile.samples:
        for f in s["frames"]:
            for part in [f, *(f.get("inlined") or [])]:
                if part.get("function") == function and part.get("file"):
                    out.add(f"{part['file']}:{part['line']}" if part.get("line") else part["file"])
    return out


def test_html_tooltip_shows_source_lines(browser, pages):
    """Hovering a frame shows where in the source its samples were: file:line."""
    _, converted, profile = pages
    open_page(browser, converted)
    for function in ("search_index", "hash_password"):
        want = sources_of(profile, function)
        assert want, f"the JSON has no file:line for {function}"
        frame = next(e for e in browser.find_elements(By.CSS_SELECTOR, "#flame .frame")
                     if e.text == function)
        ActionChains(browser).move_to_element(frame).perform()
        tooltip = browser.find_element(By.ID, "tooltip")
        WebDriverWait(browser, WAIT).until(lambda d: tooltip.is_displayed())
        rows = [r for r in tooltip.text.splitlines() if r.startswith("source: ")]
        assert rows, f"no source row in the tooltip of {function}: {tooltip.text!r}"
        shown_sources = {re.sub(r" \([\d.]+ %\)$", "", r[len("source: "):]) for r in rows
                         if not r.endswith(" more lines")}
        assert shown_sources <= want, (function, shown_sources, want)
    check_clean(browser)


def value_rows(driver, key):
    return len(table(driver, key))


def click_more(driver, key):
    for section in driver.find_elements(By.CSS_SELECTOR, ".label-key"):
        if section.find_element(By.CSS_SELECTOR, "h3 .key").text == key:
            row = section.find_element(By.CSS_SELECTOR, "tr.more-row")
            text = row.find_element(By.CSS_SELECTOR, "td.value").text
            row.click()
            return text
    pytest.fail(f"no 'more values' row for {key}")


def test_html_more_values_expand(browser, pages):
    """The "N more values" row of a key with many values lists them all when clicked,
    and folds them again."""
    _, converted, profile = pages
    open_page(browser, converted)
    _, tables = expected_tables(profile)
    values = tables["request_id"]
    assert len(values) > 12, f"too few request ids to fold: {len(values)}"
    top = value_rows(browser, "request_id")
    text = click_more(browser, "request_id")
    assert re.fullmatch(r"\d+ more values", text), text
    WebDriverWait(browser, WAIT).until(lambda d: value_rows(d, "request_id") > top)
    got = table(browser, "request_id")
    assert {v: n for v, (n, _) in got.items()} == dict(values)
    assert len(got) == top + int(text.split()[0])
    click_more(browser, "request_id")
    WebDriverWait(browser, WAIT).until(lambda d: value_rows(d, "request_id") == top)
    check_clean(browser)


def test_html_filter_from_hash(browser, pages):
    direct, _, _ = pages
    open_page(browser, direct, "#endpoint=%2Fsearch")
    names = frame_names(browser)
    assert ENDPOINT_FUNCTIONS["/search"] <= names, names
    assert not only_elsewhere("/search") & names, names
    chips = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#filters .chip")]
    assert len(chips) == 1 and "endpoint = /search" in chips[0], chips
    active = browser.find_elements(By.CSS_SELECTOR, "tr.label-row.active td.value")
    assert [e.text for e in active] == ["/search"]
    check_clean(browser)


def test_html_hostile_strings(browser, tmp_path):
    """Label values, comm and function names that are markup, line separators or
    not UTF-8 show as text (\\xHH for bytes), run nothing, and filter by URL."""
    def sample(comm, labels, function, n):
        return {"pid": 1, "tid": 1, "comm": comm, "labels": labels, "flags": [], "count": n,
                "frames": [{"address": "0x1010", "kernel": False, "module": "/srv/<b>app",
                            "function": function, "offset": 16, "module_offset": "0x1010",
                            "build_id": None}]}
    doc = {"format": "labelprof-json", "version": 1, "frequency_hz": 99,
           "start_time_unix_ns": 0, "duration_ns": 10**9, "counters": {},
           "samples": [
               sample("</script><script>alert(1)</script>",
                      {"tenant": "<img src=x onerror=alert(1)>", "k\u2028": "\udcff\u0000"},
                      "<svg onload=alert(1)>", 3),
               sample("srv", {"tenant": "a&amp;b\\x41 \u202eevil"}, "plain", 1)]}
    src, page = tmp_path / "hostile.json", tmp_path / "hostile.html"
    src.write_text(json.dumps(doc), encoding="utf-8")
    run([LABELPROF, "convert", src, "-o", page, "--format", "html"])
    open_page(browser, page)
    counts = browser.execute_script(
        "return ['script', 'img', 'svg', 'b'].map(t => document.getElementsByTagName(t).length)")
    assert counts == [2, 0, 0, 0], counts
    names = frame_names(browser)
    assert {"</script><script>alert(1)</script>", "<svg onload=alert(1)>", "plain"} <= names, names
    assert table(browser, "k\\xe2\\x80\\xa8") == {"\\xff\\x00": (3, 75.0), "(not set)": (1, 25.0)}
    tenants = table(browser, "tenant")
    assert set(tenants) == {"<img src=x onerror=alert(1)>", "a&amp;b\\x5cx41 \\xe2\\x80\\xaeevil"}
    # The shown text goes through the URL and back.
    click_row(browser, "tenant", "a&amp;b\\x5cx41 \\xe2\\x80\\xaeevil")
    WebDriverWait(browser, WAIT).until(lambda d: shown(d) == 1)
    url = browser.current_url
    open_page(browser, page, "#" + urllib.parse.urlsplit(url).fragment)
    assert shown(browser) == 1 and "plain" in frame_names(browser)
    assert "<svg onload=alert(1)>" not in frame_names(browser)
    check_clean(browser)


def test_html_python_frames(browser, tmp_path):
    """A Python frame is drawn in a colour of its own, says its kind in the
    tooltip, and is a row of its own in the function table beside a native
    function of the same name."""
    native = {"address": "0x1010", "kernel": False, "module": "/usr/bin/python3",
              "function": "spin", "file": None, "line": None, "offset": 16,
              "module_offset": "0x1010", "build_id": None}
    python = {"address": "0xb000000000000001", "kernel": False, "module": "", "kind": "python",
              "function": "spin", "file": "/srv/pyburn.py", "line": 28, "offset": None,
              "module_offset": None, "build_id": None}
    caller = {**python, "address": "0xb000000000000002", "function": "burn_1", "line": 40}
    doc = {"format": "labelprof-json", "version": 1, "frequency_hz": 99,
           "start_time_unix_ns": 0, "duration_ns": 10**9, "counters": {},
           "samples": [{"pid": 1, "tid": 1, "comm": "python3", "labels": {}, "flags": [],
                        "count": 5, "frames": [native, python, caller]}]}
    src, page = tmp_path / "python.json", tmp_path / "python.html"
    src.write_text(json.dumps(doc), encoding="utf-8")
    run([LABELPROF, "convert", src, "-o", page, "--format", "html"])
    open_page(browser, page)
    frames = browser.execute_script("""
        return Array.from(document.querySelectorAll('#flame .frame'), e =>
            [e.textContent, e.className, e.style.backgroundColor]);""")
    kinds = {(name, next(c[2:] for c in cls.split() if c.startswith("k-"))): colour
             for name, cls, colour in frames}
    assert {("spin", "user"), ("spin", "python"), ("burn_1", "python")} <= set(kinds), kinds
    assert kinds[("spin", "python")] != kinds[("spin", "user")]
    frame = next(e for e in browser.find_elements(By.CSS_SELECTOR, "#flame .frame.k-python")
                 if e.text == "spin")
    ActionChains(browser).move_to_element(frame).perform()
    tooltip = browser.find_element(By.ID, "tooltip")
    WebDriverWait(browser, WAIT).until(lambda d: tooltip.is_displayed())
    assert "kind: python" in tooltip.text and "/srv/pyburn.py:28" in tooltip.text, tooltip.text
    rows = browser.execute_script("""
        return Array.from(document.querySelectorAll('#functions > table td.fn'), e =>
            [e.textContent, e.className, e.title]);""")
    assert ["spin", "fn k-python", "spin (python)"] in rows, rows
    assert ["spin", "fn k-user", "spin (user, /usr/bin/python3)"] in rows, rows
    check_clean(browser)


def test_html_runtime_frames(browser, tmp_path):
    """Python, Java and JavaScript frames, read back from JSON, are each drawn
    in a colour of their kind's, say their kind in the tooltip, and the legend
    has a swatch for each kind."""
    def frame(kind, address, function, file):
        return {"address": address, "kernel": False, "module": "", "kind": kind,
                "function": function, "file": file, "line": 7, "offset": None,
                "module_offset": None, "build_id": None}
    native = {"address": "0x1010", "kernel": False, "module": "/usr/bin/node",
              "function": "main", "file": None, "line": None, "offset": 16,
              "module_offset": "0x1010", "build_id": None}
    frames = [frame("js", "0xb000000000000030", "handler", "/srv/app.js"),
              frame("java", "0xb000000000000020", "Burn.spin", "Burn.java"),
              frame("python", "0xb000000000000010", "burn", "/srv/pyburn.py"), native]
    doc = {"format": "labelprof-json", "version": 1, "frequency_hz": 99,
           "start_time_unix_ns": 0, "duration_ns": 10**9, "counters": {},
           "samples": [{"pid": 1, "tid": 1, "comm": "node", "labels": {}, "flags": [],
                        "count": 5, "frames": frames}]}
    src, page = tmp_path / "runtimes.json", tmp_path / "runtimes.html"
    src.write_text(json.dumps(doc), encoding="utf-8")
    run([LABELPROF, "convert", src, "-o", page, "--format", "html"])
    open_page(browser, page)
    drawn = browser.execute_script("""
        return Array.from(document.querySelectorAll('#flame .frame'), e =>
            [e.textContent, e.className, e.style.backgroundColor]);""")
    kinds = {name: (next(c[2:] for c in cls.split() if c.startswith("k-")), colour)
             for name, cls, colour in drawn}
    assert {name: kind for name, (kind, _) in kinds.items() if name != "all"} == {
        "node": "process", "main": "user", "burn": "python", "Burn.spin": "java",
        "handler": "js"}, kinds
    colours = [kinds[name][1] for name in ("main", "burn", "Burn.spin", "handler")]
    assert len(set(colours)) == 4, colours
    handler = browser.find_element(By.CSS_SELECTOR, "#flame .frame.k-js")
    ActionChains(browser).move_to_element(handler).perform()
    tooltip = browser.find_element(By.ID, "tooltip")
    WebDriverWait(browser, WAIT).until(lambda d: tooltip.is_displayed())
    assert "kind: js" in tooltip.text and "/srv/app.js:7" in tooltip.text, tooltip.text
    swatches = browser.execute_script("""
        return Array.from(document.querySelectorAll('.legend .swatch'), e =>
            [e.className, getComputedStyle(e).backgroundColor]);""")
    legend = dict(swatches)
    assert {"swatch k-python", "swatch k-java", "swatch k-js"} <= set(legend), swatches
    assert len({legend[k] for k in ("swatch k-python", "swatch k-java", "swatch k-js",
                                    "swatch k-user")}) == 4, swatches
    check_clean(browser)


def sections(driver):
    """The label keys in the order of their sections, and whether each is open."""
    return driver.execute_script("""
        return Array.from(document.querySelectorAll('.label-key'), s =>
            [s.querySelector('h3 .key').textContent, !!s.querySelector('table')]);""")


def function_rows(driver):
    return driver.execute_script("""
        return Array.from(document.querySelectorAll('#functions > table tr.fn-row'), r =>
            [r.querySelector('td.fn').textContent, Number(r.dataset.self),
             Number(r.dataset.total)]);""")


def has_function(sample, function):
    return any(part.get("function") == function
               for f in sample["frames"] for part in [f, *(f.get("inlined") or [])])


def test_html_keys_multi_filter_functions(browser, pages):
    """Keys that explain the CPU first, the folded request_id last and collapsed
    (its box opens it); several values of one key filter together (OR); a
    function table gives self and total samples, callers and callees."""
    direct, converted, profile = pages
    open_page(browser, direct)
    order = sections(browser)
    assert order[-1] == ["request_id", False], order
    assert all(is_open for _, is_open in order[:-1]), order
    browser.execute_script("""
        for (const s of document.querySelectorAll('.label-key'))
            if (s.querySelector('h3 .key').textContent === 'tenant')
                s.querySelector('.fold').click();""")
    WebDriverWait(browser, WAIT).until(lambda d: ["tenant", False] in sections(d))
    browser.execute_script("""
        for (const s of document.querySelectorAll('.label-key'))
            if (s.querySelector('h3 .key').textContent === 'tenant')
                s.querySelector('.fold').click();""")
    WebDriverWait(browser, WAIT).until(lambda d: ["tenant", True] in sections(d))

    # the page of the JSON's recording, to count against: acme, then globex added with
    # its box: either tenant
    open_page(browser, converted)
    click_row(browser, "tenant", "acme")
    WebDriverWait(browser, WAIT).until(lambda d: d.current_url.endswith("#tenant=acme"))
    browser.execute_script("""
        for (const s of document.querySelectorAll('.label-key'))
            if (s.querySelector('h3 .key').textContent === 'tenant')
                for (const r of s.querySelectorAll('tr.label-row'))
                    if (r.querySelector('td.value').textContent === 'globex')
                        r.querySelector('input[type=checkbox]').click();""")
    want = count(s for s in profile.samples
                 if {(b"tenant", b"acme"), (b"tenant", b"globex")} & labels_of(s))
    WebDriverWait(browser, WAIT).until(lambda d: shown(d) == want)
    fragment = urllib.parse.urlsplit(browser.current_url).fragment
    assert fragment == "tenant=acme&tenant=globex", fragment
    chips = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#filters .chip")]
    assert len(chips) == 1 and "tenant = acme or globex" in chips[0], chips
    active = browser.find_elements(By.CSS_SELECTOR, "tr.label-row.active td.value")
    assert sorted(e.text for e in active) == ["acme", "globex"]
    # the same filter from the URL
    open_page(browser, converted, "#tenant=acme&tenant=globex")
    assert shown(browser) == want

    browser.find_element(By.ID, "clear-filters").click()
    WebDriverWait(browser, WAIT).until(lambda d: shown(d) == count(profile.samples))
    rows = function_rows(browser)
    assert [t for _, _, t in rows] == sorted((t for _, _, t in rows), reverse=True), rows
    by_name = {name: (self_, total) for name, self_, total in rows}
    for function in ("hash_password", "search_index"):
        self_, total = by_name[function]
        assert total == count(s for s in profile.samples if has_function(s, function)), function
        # self: where it is the leaf itself, not a function inlined into it
        assert 0 <= self_ <= total, (function, self_, total)
    assert max(s for _, s, _ in rows) > 0, rows
    browser.find_element(By.CSS_SELECTOR, "#functions th[data-sort=self]").click()
    rows = function_rows(browser)
    assert [s for _, s, _ in rows] == sorted((s for _, s, _ in rows), reverse=True), rows
    browser.find_element(By.CSS_SELECTOR, "#functions th[data-sort=total]").click()
    for row in browser.find_elements(By.CSS_SELECTOR, "#functions > table tr.fn-row"):
        if row.find_element(By.CSS_SELECTOR, "td.fn").text == "hash_password":
            row.click()
            break
    detail = WebDriverWait(browser, WAIT).until(lambda d: d.find_element(By.ID, "fn-detail"))
    callers = browser.execute_script("""
        const t = document.querySelectorAll('#fn-detail table')[0];
        return Array.from(t.querySelectorAll('tbody tr'), r =>
            Number(r.querySelector('td.samples').textContent.replace(/,/g, '')));""")
    assert "hash_password" in detail.text and "Callers" in detail.text and "Callees" in detail.text
    assert sum(callers) == by_name["hash_password"][1], callers
    check_clean(browser)
