"""``ladder serve --webhook URL``: a POST of JSON on each bot deactivation.

An author should not learn that their bot was deactivated only by looking. The
deactivation is written by whichever ladder process recorded the third failure (a
``ladder worker`` on another machine too), in ``bot_events``; ``serve`` follows that
table (every 2 s, events after the newest one it saw at start) and posts each
deactivation to the URL:

    {"event": "bot.deactivated", "bot": "mine", "version": 3,
     "reason": "3 failures in a row; last: crash in match lm-...", "time": "2026-...Z",
     "ladder": "ladder.example.org:50061"}

A webhook never stalls the ladder: the poller runs in a thread of its own, each POST in
another with a 5 s timeout, and a refused, slow or failing endpoint is one warning line
in the ladder's log (its host only: a URL may carry a secret) and the event is not
retried. At most 100 POSTs wait; past that new ones are dropped with a warning.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import logging
import queue
import threading
import urllib.error
import urllib.request
from urllib.parse import urlsplit

from cirulla.ladder.store import LadderStore
from cirulla.ladder.store_authors import BotEvent

log = logging.getLogger("cirulla.ladder.webhook")

POLL_SECONDS = 2.0
POST_TIMEOUT = 5.0
MAX_WAITING = 100


def check_url(url: str) -> str:
    """``--webhook``: an http(s) URL with a host; a ValueError naming the option."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"--webhook: an http:// or https:// URL with a host, not {url[:40]!r}")
    return url


def payload(event: BotEvent, ladder: str) -> bytes:
    """The JSON body of one deactivation."""
    at = datetime.datetime.fromtimestamp(event["at"], datetime.UTC)
    return json.dumps(
        {
            "event": "bot.deactivated",
            "bot": event["bot"],
            "version": event["version"],
            "reason": event["reason"],
            "time": at.isoformat().replace("+00:00", "Z"),
            "ladder": ladder,
        }
    ).encode()


class DeactivationWebhook:
    """Follows ``bot_events`` and posts each deactivation to ``url``."""

    def __init__(self, store: LadderStore, url: str, ladder: str) -> None:
        self.store = store
        self.url = check_url(url)
        self.host = urlsplit(url).hostname or "?"
        self.ladder = ladder
        self._stop = threading.Event()
        self._posts: queue.Queue[bytes | None] = queue.Queue(MAX_WAITING)
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        last = self.store.authors.last_event_id()
        self._threads = [
            threading.Thread(target=self._poll, args=(last,), daemon=True, name="webhook-poll"),
            threading.Thread(target=self._post_all, daemon=True, name="webhook-post"),
        ]
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        self._stop.set()
        with contextlib.suppress(queue.Full):
            self._posts.put_nowait(None)
        for thread in self._threads:
            thread.join(POST_TIMEOUT + 1)

    def _poll(self, last: int) -> None:
        while not self._stop.wait(POLL_SECONDS):
            try:
                events = self.store.authors.events_after(last)
            except Exception as exc:  # the database is down: try again at the next poll
                log.warning("ladder_webhook_poll_failed %s", type(exc).__name__)
                continue
            for event in events:
                last = event["id"]
                try:
                    self._posts.put_nowait(payload(event, self.ladder))
                except queue.Full:
                    log.warning("ladder_webhook_dropped bot=%s (100 posts waiting)", event["bot"])

    def _post_all(self) -> None:
        while True:
            body = self._posts.get()
            if body is None:
                return
            self.post(body)

    def post(self, body: bytes) -> bool:
        """One POST; False (and one warning line) when the endpoint fails."""
        request = urllib.request.Request(
            self.url,
            data=body,
            method="POST",
            headers={"Content-Type": "application/json", "User-Agent": "cirulla-ladder"},
        )
        try:
            with urllib.request.urlopen(request, timeout=POST_TIMEOUT) as response:
                response.read(1024)
            return True
        except (OSError, urllib.error.URLError, ValueError) as exc:
            log.warning("ladder_webhook_failed host=%s error=%s", self.host, type(exc).__name__)
            return False
