"""report.html: self-contained, escaped, and, opened in headless Chromium (Debian's chromium and
chromium-driver, driven with Selenium), showing a person the counts, filtering the matrix and opening
a failure's details. `.ci/run` installs the browser; without it the browser tests fail under CI and
are skipped, with the command to install it, elsewhere."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from draconform.reporting.html import bar, render_html
from draconform.reporting.records import Run
from draconform.reporting.results import Results

from .helpers import KEP, step
from .test_writers import _run

CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
INSTALL = "apt-get install chromium chromium-driver"


def _failing_run() -> Run:
    """The writer tests' run, with a script tag in a failure message (it must show as text)."""
    run = _run()
    scenarios = list(run.scenarios)
    index = next(i for i, s in enumerate(scenarios) if s.name == "fails")
    message = "AssertionError: expected <script>alert(1)</script> to be refused"
    steps = (step("a claim exists", "passed", line=18), step("it is refused", "failed", line=19, message=message))
    scenarios[index] = replace(scenarios[index], message=message, steps=steps)
    return replace(run, scenarios=scenarios)


def test_the_page_needs_nothing_from_outside() -> None:
    page = render_html(_failing_run())
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "<link" not in page and "@import" not in page and "url(" not in page
    assert "default-src 'none'" in page  # and the browser is told to fetch nothing


def test_text_from_the_run_is_escaped() -> None:
    page = render_html(_failing_run())
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_the_chart_bar_is_split_by_status_in_proportion() -> None:
    segments = bar({"passed": 3, "failed": 1, "error": 0, "skipped": 0, "untested": 0, "total": 4})
    assert [(s.status, s.count, s.x, s.width) for s in segments] == [
        ("passed", 3, 0, 180.0),
        ("failed", 1, 180.0, 60.0),
    ]


# --- in a real browser -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if CHROMIUM is None or CHROMEDRIVER is None:
        if os.environ.get("CI"):
            pytest.fail(f"headless Chromium is missing; .ci/run installs it ({INSTALL})")
        pytest.skip(f"headless Chromium is not installed here ({INSTALL}, as .ci/run does)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM  # the system browser: Selenium must not look for, or fetch, another
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    options.add_argument("--window-size=1280,1600")
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def page(browser: object, tmp_path_factory: pytest.TempPathFactory) -> object:
    path = tmp_path_factory.mktemp("html") / "report.html"
    path.write_text(render_html(_failing_run()), encoding="utf-8")
    browser.get(path.as_uri())  # type: ignore[attr-defined]
    return browser


def _visible_rules(driver: object) -> list[str]:
    from selenium.webdriver.common.by import By

    rows = driver.find_elements(By.CSS_SELECTOR, "#matrix tr.rule")  # type: ignore[attr-defined]
    return [row.get_attribute("data-id") for row in rows if row.is_displayed()]


def _choose(driver: object, control: str, value: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element(By.ID, f"filter-{control}")).select_by_value(value)  # type: ignore[attr-defined]


def _reset(driver: object) -> None:
    from selenium.webdriver.common.by import By

    for control in ("status", "kep", "level", "profile"):
        _choose(driver, control, "")
    driver.find_element(By.ID, "filter-text").clear()  # type: ignore[attr-defined]


def test_a_person_sees_the_counts(page: object) -> None:
    from selenium.webdriver.common.by import By

    counts = Results.of(_failing_run()).rule_counts()
    for status in ("passed", "failed", "error", "skipped", "untested"):
        box = page.find_element(By.CSS_SELECTOR, f"#totals [data-status={status}] .n")  # type: ignore[attr-defined]
        assert box.is_displayed() and box.text == str(counts[status])
    verdict = page.find_element(By.CSS_SELECTOR, "#profiles [data-profile=core] .verdict")  # type: ignore[attr-defined]
    assert verdict.text.lower() == "failure"
    assert page.find_element(By.ID, "shown").text == "5 of 5 rules shown"  # type: ignore[attr-defined]


def test_filtering_to_failed_shows_exactly_the_failed_rules(page: object) -> None:
    from selenium.webdriver.common.by import By

    _reset(page)
    _choose(page, "status", "failed")
    failed = [r.rule.id for r in Results.of(_failing_run()).rules if r.status == "failed"]
    assert failed == [f"{KEP}/B"]
    assert _visible_rules(page) == failed
    assert page.find_element(By.ID, "shown").text == "1 of 5 rules shown"  # type: ignore[attr-defined]


def test_filters_combine_and_search_reads_the_rule_text(page: object) -> None:
    from selenium.webdriver.common.by import By

    _reset(page)
    _choose(page, "profile", "extended")
    assert _visible_rules(page) == [f"{KEP}/C"]
    _reset(page)
    page.find_element(By.ID, "filter-text").send_keys("rule d holds")  # type: ignore[attr-defined]
    assert _visible_rules(page) == [f"{KEP}/D"]
    _reset(page)
    _choose(page, "level", "MUST")
    _choose(page, "status", "untested")
    assert _visible_rules(page) == [f"{KEP}/D"]
    _reset(page)
    assert len(_visible_rules(page)) == 5


def test_a_failures_details_open_with_its_steps_message_and_rule(page: object, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    _reset(page)
    failure = page.find_element(By.CSS_SELECTOR, "details.failure[data-status=failed]")  # type: ignore[attr-defined]
    message = failure.find_element(By.CSS_SELECTOR, "pre.message")
    assert not message.is_displayed()  # closed until asked
    failure.find_element(By.TAG_NAME, "summary").click()
    assert message.is_displayed()
    assert message.text == "AssertionError: expected <script>alert(1)</script> to be refused"
    assert "Failed at Then it is refused (line 19)." in failure.text
    steps = [li.text for li in failure.find_elements(By.CSS_SELECTOR, "ol.steps li")]
    assert steps == ["passed Then a claim exists", "failed Then it is refused"]
    assert f"{KEP}/B (MUST, Design Details): The rule B holds." in failure.text
    page.save_screenshot(str(tmp_path / "failure.png"))  # type: ignore[attr-defined]


def test_a_rules_details_show_its_decision_and_scenarios(page: object) -> None:
    from selenium.webdriver.common.by import By

    _reset(page)
    row = page.find_element(By.CSS_SELECTOR, f"#matrix tr[data-id='{KEP}/D']")  # type: ignore[attr-defined]
    row.find_element(By.TAG_NAME, "summary").click()
    assert "Decision: D-7: the KEP is read as requiring X" in row.text
    assert "Why untested: no kubelet yet" in row.text
    decisions = page.find_element(By.ID, "decisions")  # type: ignore[attr-defined]
    assert f"{KEP}/D: D-7" in decisions.text


def test_the_contents_link_to_sections_that_exist() -> None:
    page = render_html(_failing_run())
    contents = page.split('<nav class="contents"', 1)[1].split("</nav>", 1)[0]
    targets = re.findall(r'href="#([^"]+)"', contents)
    assert {"conformance", "by-kep", "traceability", "failures", "decisions-heading"} <= set(targets)
    for target in targets:
        assert f'id="{target}"' in page


def test_an_interrupted_run_says_so_at_the_top() -> None:
    from draconform.reporting.records import Interruption

    run = _failing_run()
    stopped = replace(run, info=replace(run.info, interruption=Interruption("SIGTERM", 7, 15)))
    page = render_html(stopped)
    assert 'id="interrupted"' in page and "Interrupted by SIGTERM: 7 of 15 scenarios did not run" in page
    assert 'id="interrupted"' not in render_html(run)


def test_an_outlines_rows_are_a_table_with_its_columns() -> None:
    page = render_html(_failing_run())
    table = page.split('<table class="rows" data-outline="kep-1/demo.feature:50">', 1)[1].split("</table>", 1)[0]
    assert "<th>a</th><th>outcome</th>" in table
    assert table.count("<td>1</td>") == 1 and table.count("<td>2</td>") == 1


def test_a_clicked_total_shows_its_rules(page: object) -> None:
    from selenium.webdriver.common.by import By

    _reset(page)
    page.find_element(By.CSS_SELECTOR, "#totals a[data-status=failed]").click()  # type: ignore[attr-defined]
    assert _visible_rules(page) == [f"{KEP}/B"]
    page.find_element(By.CSS_SELECTOR, "#totals a[data-status=total]").click()  # type: ignore[attr-defined]
    assert len(_visible_rules(page)) == 5


def test_a_decision_link_opens_its_rule_below_the_sticky_filters(page: object) -> None:
    from selenium.webdriver.common.by import By

    _reset(page)
    _choose(page, "status", "passed")  # the rule is hidden by a filter: the link must still show it
    page.find_element(By.CSS_SELECTOR, f"#decisions a[href='#rule-{KEP}-D']").click()  # type: ignore[attr-defined]
    row = page.find_element(By.ID, f"rule-{KEP}-D")  # type: ignore[attr-defined]
    assert row.is_displayed()
    assert row.find_element(By.TAG_NAME, "details").get_attribute("open") is not None
    filters = page.find_element(By.ID, "filters").rect  # type: ignore[attr-defined]
    top = page.execute_script("return arguments[0].getBoundingClientRect().top;", row)  # type: ignore[attr-defined]
    assert top >= filters["height"] - 1  # not hidden under the sticky bar


def test_every_status_badge_is_visible(page: object) -> None:
    from selenium.webdriver.common.by import By

    for status in ("not-selected", "not-run", "untested"):
        page.execute_script(  # type: ignore[attr-defined]
            "var b = document.createElement('span'); b.className = 'badge ' + arguments[0];"
            "b.id = 'probe-' + arguments[0]; b.textContent = arguments[0]; document.body.appendChild(b);", status)
        badge = page.find_element(By.ID, f"probe-{status}")  # type: ignore[attr-defined]
        background = badge.value_of_css_property("background-color")
        assert background not in ("rgba(0, 0, 0, 0)", "transparent"), status
        assert badge.value_of_css_property("color") != background
