"""The server against y-websocket's own client (WebsocketProvider and Yjs, bundled from
node_modules), in Chromium, through a real daphne: two editors typing at once converge, the
type-100 messages reach the provider's handler, quiet sockets stay open, and the merged save
holds every character. The editor's UI is the client branch's; this is the wire."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from notes import services
from notes.models import Note
from tests.browser.editing import signed_in
from tests.browser.worker import in_worker
from tests.collaboration.servers import live_asgi_server  # noqa: F401 - the fixture
from tests.conftest import ROOT

pytestmark = pytest.mark.browser

CLIENT = """
import * as Y from 'yjs'
import { WebsocketProvider } from 'y-websocket'
import * as decoding from 'lib0/decoding'
window.startLive = (url, room, presence) => {
  const doc = new Y.Doc()
  const provider = new WebsocketProvider(url, room, doc)
  const live = { doc, provider, server: [], closes: [], body: doc.getText('body') }
  provider.messageHandlers[100] = (encoder, decoder) => {
    live.server.push(JSON.parse(decoding.readVarString(decoder)))
  }
  provider.awareness.setLocalState(presence ? { user: { name: 'Ada', color: '#aa0000' } } : null)
  provider.on('connection-close', (event) => live.closes.push(event ? event.code : null))
  window.live = live
}
"""
EVERY_TOKEN = """(() => {
  const text = live.body.toString()
  for (let i = 0; i < 25; i++) {
    if (!text.includes(`a${i} `) || !text.includes(` b${i}`)) return false
  }
  return true
})()"""


@pytest.fixture(scope="session")
def yjs_client(tmp_path_factory):
    """The client bundled by esbuild from node_modules (`make setup` installs both)."""
    esbuild = ROOT / "node_modules" / ".bin" / "esbuild"
    if not esbuild.is_file():
        message = f"no esbuild at {esbuild}: run make setup"
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    folder = tmp_path_factory.mktemp("yjs-client")
    (folder / "entry.js").write_text(CLIENT)
    subprocess.run(
        [
            str(esbuild),
            str(folder / "entry.js"),
            "--bundle",
            "--format=iife",
            f"--outfile={folder / 'client.js'}",
            "--log-level=warning",
        ],
        check=True,
        cwd=ROOT,
        env={"NODE_PATH": str(ROOT / "node_modules"), "PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    return folder / "client.js"


def test_two_yjs_clients_type_at_once_and_every_character_is_saved(
    browser,
    live_asgi_server,  # noqa: F811
    yjs_client,
    author,
    monkeypatch,
):
    from collaboration import consumers

    monkeypatch.setattr(consumers, "KEEPALIVE_SECONDS", 1)
    note = in_worker(services.note_create, user=author, title="Together")
    pages = []
    for presence in (True, False):  # the second has no presence: only the keepalive speaks
        page = signed_in(browser, live_asgi_server.url, "ada", bypass_csp=True)
        page.add_script_tag(path=str(yjs_client))
        ws_root = live_asgi_server.url.replace("http", "ws") + "/live/notes"
        page.evaluate(f"startLive('{ws_root}', '{note.pk}/', {str(presence).lower()})")
        page.wait_for_function("window.live.provider.synced")
        pages.append(page)
    assert pages[0].evaluate("live.doc.getText('title').toString()") == "Together"
    for i in range(25):
        pages[0].evaluate(f"live.body.insert(0, 'a{i} ')")
        pages[1].evaluate(f"live.body.insert(live.body.length, ' b{i}')")
    for page in pages:
        page.wait_for_function(EVERY_TOKEN)
    text = pages[0].evaluate("live.body.toString()")
    assert pages[1].evaluate("live.body.toString()") == text
    pages[0].wait_for_function("live.server.some(m => m.type === 'saved')")
    assert pages[0].evaluate("live.server.some(m => m.type === 'stored')")
    time.sleep(3)  # quiet: the keepalive, not typing, keeps both sockets open
    assert [page.evaluate("live.closes") for page in pages] == [[], []]
    for page in pages:
        page.context.close()
    deadline = time.monotonic() + 10
    while consumers.editors and time.monotonic() < deadline:
        time.sleep(0.05)  # the last editor's leaving saves
    saved = in_worker(lambda: services.working_state(Note.objects.get(pk=note.pk))["body"])
    assert saved == text
