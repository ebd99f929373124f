"""hermes serve's page in a real headless browser (the distribution's Chromium, driven by selenium): a turn
started through the API shows on the page with its tool call, live, then its result and the hook trace."""

import shutil
import time

import pytest

from plugins_providers.testserver import reply
from tests.serve.test_chat_completions import post

CHROMIUM, DRIVER = shutil.which("chromium") or shutil.which("chromium-browser"), shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="Chromium and chromedriver are not installed "
                                "(scripts/install_test_system_packages.sh installs them)")


@pytest.fixture
def browser(tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 f"--user-data-dir={tmp_path / 'chromium'}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)
    yield driver
    driver.quit()


def wait_for(check, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError("the page never showed it")


def open_page(browser, url: str) -> None:
    """The page, loaded: on a loaded machine headless Chromium once came back from get() with an empty document
    (title ""), so a page not there within 10 s is asked for again."""
    for _ in range(3):
        browser.get(url)
        try:
            wait_for(lambda: browser.title == "hermes", timeout=10)
            return
        except AssertionError:
            continue
    assert browser.title == "hermes"


def click_when_found(find, timeout=30):
    """Click what find() returns, finding it again if the page re-drew it in between (its lists are re-drawn every
    second, so an element found a moment ago may be gone by the click)."""
    from selenium.common.exceptions import StaleElementReferenceException

    def attempt():
        try:
            found = find()
            if found:
                found.click()
            return bool(found)
        except StaleElementReferenceException:
            return False
    wait_for(attempt, timeout)


def test_a_turn_started_through_the_api_shows_its_tool_call_live(serve, wire_server, browser):
    from selenium.webdriver.common.by import By

    served = serve()
    open_page(browser, served.url + "/")
    wait_for(lambda: "none yet" in browser.find_element(By.ID, "runs").text)
    wire_server.push(reply(tool_calls=[("terminal", {"command": "sleep 2; echo kiwi"})]),
                     reply("The note says kiwi."))
    status, _, started = post(served, "/v1/runs", {"input": "what does the note say?"})
    assert status == 202
    card = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, ".tool-call"))[0]  # while the tool runs
    assert card.find_element(By.CSS_SELECTOR, ".name").text == "terminal"
    assert "sleep 2" in card.find_element(By.CSS_SELECTOR, ".args").text
    assert card.find_element(By.CSS_SELECTOR, ".status").text == "running"
    wait_for(lambda: card.find_element(By.CSS_SELECTOR, ".status").text == "ok")
    assert "kiwi" in card.find_element(By.CSS_SELECTOR, ".result").text
    assert card.find_element(By.CSS_SELECTOR, ".duration").text.endswith(" ms")
    wait_for(lambda: browser.find_element(By.ID, "run-status").text == "completed")
    assert "The note says kiwi." in browser.find_element(By.ID, "run-body").text
    trace = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#trace table tr"))
    browser.find_element(By.CSS_SELECTOR, "#trace summary").click()
    hooks = {row.find_elements(By.TAG_NAME, "td")[0].text for row in trace[1:]}
    assert {"pre_tool_call", "on_tool_start", "on_tool_complete", "append_messages"} <= hooks  # the ones with plugins
    click_when_found(lambda: next((li for li in browser.find_elements(By.CSS_SELECTOR, "#sessions li")
                                   if "what does the note say?" in li.text), None))  # the stored conversation
    stored = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#view .tool-call"))[0]
    assert "kiwi" in stored.find_element(By.CSS_SELECTOR, ".result").text


def test_a_list_whose_items_did_not_change_is_not_drawn_again(serve, browser):
    """The page asks for its runs and sessions every second; re-drawing an unchanged list would lose a click that
    lands in between (and the text selected in it)."""
    from selenium.webdriver.common.by import By

    served = serve()
    open_page(browser, served.url + "/")
    item = wait_for(lambda: [li for li in browser.find_elements(By.CSS_SELECTOR, "#runs li") if "none yet" in li.text])[0]
    time.sleep(2.5)  # two refreshes
    assert item.text == "none yet"  # the same element: one drawn again would be stale


def test_a_turns_image_shows_as_an_image_in_its_run_and_its_session(serve, wire_server, browser):
    """A message of text and image parts showed as "[object Object]"."""
    from selenium.webdriver.common.by import By

    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    served = serve(config={"agent": {"image_input_mode": "native"}})
    open_page(browser, served.url + "/")
    wire_server.push(reply("A dot."))
    status, _, _ = post(served, "/v1/runs", {"input": [{"role": "user", "content": [
        {"type": "input_text", "text": "what is this?"}, {"type": "input_image", "image_url": f"data:image/png;base64,{png}"}]}]})
    assert status == 202
    click_when_found(lambda: next((li for li in browser.find_elements(By.CSS_SELECTOR, "#runs li")
                                   if li.text.startswith("what is this?")), None))  # its text, not its parts
    wait_for(lambda: browser.find_elements(By.ID, "run-status") and
             browser.find_element(By.ID, "run-status").text == "completed")
    asked = browser.find_element(By.CSS_SELECTOR, "#view .message.user")
    assert asked.text == "what is this?" and "object Object" not in browser.find_element(By.ID, "view").text
    image = asked.find_element(By.CSS_SELECTOR, "img.image")
    wait_for(lambda: browser.execute_script("return arguments[0].complete && arguments[0].naturalWidth", image) == 1)
    click_when_found(lambda: next((li for li in browser.find_elements(By.CSS_SELECTOR, "#sessions li")
                                   if "what is this?" in li.text), None))
    stored = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#view h2 code") and
                      browser.find_elements(By.CSS_SELECTOR, "#view .message.user img.image"))[0]
    assert stored.get_attribute("src") == f"data:image/png;base64,{png}"
