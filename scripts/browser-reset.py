#!/usr/bin/env python3
"""Follows a password reset link in headless Chromium with JavaScript turned off, types the new password
into the choose-password form and clicks its button, as a person would; keeps a screenshot of the filled
form and of the page it ends on. Driven over the DevTools protocol (websockets).
Usage: browser-reset.py <link> <new password> <screenshot prefix>
Prints one JSON line: {"formURL": ..., "finalURL": ..., "finalText": ...}."""
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from websockets.sync.client import connect


class Browser:
    def __init__(self):
        self.profile = tempfile.mkdtemp(prefix="roost-chromium-")
        binary = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
        if not binary:
            sys.exit("chromium not found (make test installs Debian's chromium)")
        self.process = subprocess.Popen(
            [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
             "--remote-debugging-port=0", "--user-data-dir=" + self.profile, "--window-size=800,700", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        url = None
        deadline = time.time() + 60
        while time.time() < deadline:
            line = self.process.stderr.readline()
            match = re.search(r"DevTools listening on (ws://\S+)", line)
            if match:
                url = match.group(1)
                break
        if not url:
            self.close()
            sys.exit("chromium did not start")
        self.socket = connect(url, max_size=None, open_timeout=30)
        self.next_id = 0
        self.session = None
        self.events = []

    def call(self, method, params=None, timeout=30):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if self.session:
            message["sessionId"] = self.session
        self.socket.send(json.dumps(message))
        deadline = time.time() + timeout
        while time.time() < deadline:
            reply = json.loads(self.socket.recv(timeout=max(0.1, deadline - time.time())))
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError("%s: %s" % (method, reply["error"]))
                return reply.get("result", {})
            self.events.append(reply)
        raise TimeoutError(method)

    def wait_for(self, event, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for index, seen in enumerate(self.events):
                if seen.get("method") == event:
                    del self.events[: index + 1]
                    return seen
            try:
                self.events.append(json.loads(self.socket.recv(timeout=max(0.1, deadline - time.time()))))
            except TimeoutError:
                break
        raise TimeoutError(event)

    def open_page(self):
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Page.enable")
        self.call("Emulation.setScriptExecutionDisabled", {"value": True})  # The form must work without JavaScript.

    def navigate(self, url):
        self.call("Page.navigate", {"url": url})
        self.wait_for("Page.loadEventFired")

    def url(self):
        history = self.call("Page.getNavigationHistory")
        return history["entries"][history["currentIndex"]]["url"]

    def node(self, selector):
        root = self.call("DOM.getDocument")["root"]["nodeId"]
        node = self.call("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
        if not node:
            raise RuntimeError("no %s on %s" % (selector, self.url()))
        return node

    def type_into(self, selector, text):
        self.call("DOM.focus", {"nodeId": self.node(selector)})
        self.call("Input.insertText", {"text": text})

    def click(self, selector):
        quad = self.call("DOM.getBoxModel", {"nodeId": self.node(selector)})["model"]["content"]
        x, y = (quad[0] + quad[4]) / 2, (quad[1] + quad[5]) / 2
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1})

    def text(self):
        return self.call("DOM.getOuterHTML", {"nodeId": self.node("body")})["outerHTML"]

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", {"format": "png"})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            self.process.terminate()
            self.process.wait(10)
        except Exception:
            self.process.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


def main():
    link, password, prefix = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(os.path.dirname(os.path.abspath(prefix)), exist_ok=True)
    browser = Browser()
    try:
        browser.open_page()
        browser.navigate(link)  # The mailed link redirects to the choose-password page.
        form_url = browser.url()
        browser.type_into("#password", password)
        browser.screenshot(prefix + "-form.png")
        browser.click("#change_password")
        browser.wait_for("Page.loadEventFired")
        browser.screenshot(prefix + "-done.png")
        print(json.dumps({"formURL": form_url, "finalURL": browser.url(), "finalText": browser.text()}))
    finally:
        browser.close()


if __name__ == "__main__":
    main()
